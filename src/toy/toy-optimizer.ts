import { z } from 'zod';

import { contentText } from '../harness/qwen-code.js';
import type { ChatMessage } from '../model/types.js';
import { readFreeTextTeam, structuredId, type FreeTextAgent } from './free-text-team.js';
import { step, type Step } from './steps.js';
import { TOY_OUTPUT_MARKER } from './toy-marker.js';
import { toyDraw } from './toy-random.js';

/**
 * The toy workflow optimizer: reads the current design from its prompt and returns it with one change, in the
 * reply format the optimizer prompt asks for. The change is one of three, tried in an order that rotates with the
 * number of comparisons so far (and the seed): a new check in the contract of the subagent with the fewest checks; a
 * conditional return hop from the last checking subagent back to the first one; a new contract field reporting
 * check outcomes. Which change comes first depends on the seed (the request's, else the server's); the order then
 * moves on by one per comparison, so successive proposals touch contracts and hops in turn.
 *
 * A v0 that is not yet structured gets its structure first, as its one change: a free-text team becomes the agents
 * its text lists (or a lead, an analyst and a reporter when it lists none), each subagent with a small contract and a
 * call and return hop; a draft gets the contracts and hops it lacks.
 *
 * Its one change is grounded, in `evidence_used` (one entry, as there is one change), in the first of the judge's
 * points against the candidate of the latest comparison in the history; when that comparison lists none, in the
 * first sentence of its latest rationale; with no comparison yet, in the instructions' advice.
 */

/** Whether a system prompt is the optimizer's (`buildOptimizerPrompt`). */
export function isOptimizerSystemPrompt(system: string): boolean {
  return system.includes('You are the designer of an agent team') && system.includes('"verification_checks"');
}

const Field = z.looseObject({ name: z.string(), type: z.string(), description: z.string() });
const Check = z.looseObject({ name: z.string(), description: z.string() });
const Agent = z.looseObject({
  id: z.string(),
  kind: z.string(),
  role: z.string(),
  instruction: z.string(),
  contract: z.looseObject({ fields: z.array(Field), checks: z.array(Check).default([]) }).optional(),
});
const Hop = z.looseObject({ from: z.string(), to: z.string(), condition: z.string().optional() });
const Design = z.looseObject({ agents: z.array(Agent), hops: z.array(Hop) });
type Design = z.infer<typeof Design>;
type Agent = z.infer<typeof Agent>;

const CHECK_CATALOGUE = [
  {
    name: 'outputs_complete',
    description:
      'Every file this agent is responsible for exists and has every key or section the task asks for.',
  },
  { name: 'values_finite', description: 'Every number in the result files is finite.' },
  { name: 'rerun_matches', description: 'Re-running the analysis script gives the same numbers.' },
  {
    name: 'values_plausible',
    description: 'Every estimate lies in a plausible range (positive where it must be).',
  },
];

interface Change {
  design: Design;
  summary: string;
  impact: string;
  verification: string;
}

type ChangeMaker = (design: Design) => Change | undefined;

export function optimizerTurn(messages: ChatMessage[], seed: number): Step {
  const user = messages.find((message) => message.role === 'user');
  const text = user ? contentText(user.content) : '';
  const freeText = /^# Current design \(([^)]*)\)\s*(`{3,})text\n([\s\S]*?)\n\2/m.exec(text);
  const block = /^# Current design \(([^)]*)\)\s*```json\n([\s\S]*?)\n```/m.exec(text);
  let design: Design | undefined;
  try {
    const parsed = Design.safeParse(block ? JSON.parse(block[2]!) : undefined);
    if (parsed.success) design = parsed.data;
  } catch {
    design = undefined;
  }
  const comparisons = [...text.matchAll(/^## \d+\. /gm)].length;
  const evidence = latestJudgePoint(text) ?? latestRationaleSentence(text);
  const structuring = freeText ? structureFreeText(freeText[3]!) : design ? completeDraft(design) : undefined;
  if (structuring) return replyWith(structuring, evidence, comparisons);
  if (!design) {
    return step.text(
      `I could not find the current design in the prompt, so I propose nothing. ${TOY_OUTPUT_MARKER}`,
    );
  }
  const makers: ChangeMaker[] = [addCheck, addReturnHop, addField];
  const offset = (comparisons + Math.floor(toyDraw(seed, 'optimizer') * makers.length)) % makers.length;
  const ordered = [...makers.slice(offset), ...makers.slice(0, offset)];
  const change = ordered
    .map((make) => make(structuredClone(design)))
    .find((candidate) => candidate !== undefined);
  if (!change) {
    return step.text(`The design already has every change I know of. ${TOY_OUTPUT_MARKER}`);
  }
  return replyWith(change, evidence, comparisons);
}

function replyWith(change: Change, evidence: string | undefined, comparisons: number): Step {
  const reply = {
    design: change.design,
    changes: [change.summary],
    why: `Stronger contracts and round trips let the orchestrator verify the work instead of trusting it ${TOY_OUTPUT_MARKER}.`,
    evidence_used: [
      evidence ?? 'No comparison yet: strengthen the contract first, as the instructions advise.',
    ],
    expected_impact: change.impact,
    verification_checks: [change.verification],
  };
  return step.text(JSON.stringify(reply), {
    reasoning: `Make one change, grounded in the latest comparison (${comparisons} so far). ${TOY_OUTPUT_MARKER}`,
  });
}

/** The contract a subagent gets when the design it comes from gave it none. */
function startingContract(): NonNullable<Agent['contract']> {
  return {
    fields: [
      { name: 'files_written', type: 'list', description: 'The files this agent wrote, each with its path.' },
      { name: 'summary', type: 'string', description: 'What this agent did and found, with its numbers.' },
    ],
    checks: [{ ...CHECK_CATALOGUE[0]! }],
  };
}

/** A free-text team in the structured form: the agents it lists, each called and returning in turn. */
function structureFreeText(text: string): Change {
  const team = readFreeTextTeam(text);
  const lead = structuredId(team.orchestrator.id);
  const agent = (member: FreeTextAgent, kind: 'orchestrator' | 'subagent'): Agent => ({
    id: structuredId(member.id),
    kind,
    role: member.role,
    instruction: member.instruction,
    ...(kind === 'subagent' ? { contract: startingContract() } : {}),
  });
  const subagents = team.subagents.map((member) => agent(member, 'subagent'));
  const design: Design = {
    agents: [agent(team.orchestrator, 'orchestrator'), ...subagents],
    hops: subagents.flatMap((member) => [
      { from: lead, to: member.id },
      { from: member.id, to: lead },
    ]),
  };
  const source = team.listed
    ? 'the agents the text lists'
    : 'a lead, an analyst and a reporter (the text lists no agents)';
  return {
    design,
    summary: `wrote the free-text team in the structured form: ${source}, each subagent with a contract (files_written, summary; check outputs_complete) and a call and return hop`,
    impact:
      'Every subagent hands back the files it wrote and whether they are complete, so the orchestrator can check them.',
    verification: 'Each subagent of the next run reports files_written and outputs_complete.',
  };
}

/** A draft with the contracts and hops it lacks; undefined when it lacks none. */
function completeDraft(design: Design): Change | undefined {
  const completed = structuredClone(design);
  const added: string[] = [];
  const lead = completed.agents.find((agent) => agent.kind === 'orchestrator');
  for (const agent of completed.agents) {
    if (agent.kind !== 'subagent' || agent.contract) continue;
    agent.contract = startingContract();
    added.push(`a contract for ${agent.id}`);
  }
  if (lead) {
    for (const agent of completed.agents) {
      if (
        agent.kind !== 'subagent' ||
        completed.hops.some((hop) => hop.from === agent.id || hop.to === agent.id)
      )
        continue;
      completed.hops.push({ from: lead.id, to: agent.id }, { from: agent.id, to: lead.id });
      added.push(`hops ${lead.id} → ${agent.id} → ${lead.id}`);
    }
  }
  if (added.length === 0) return undefined;
  return {
    design: completed,
    summary: `completed the draft: ${added.join('; ')}`,
    impact: 'Every subagent hands back a contract the orchestrator can check, in a fixed call order.',
    verification: 'Each subagent of the next run reports its contract fields.',
  };
}

function subagentsInCallOrder(design: Design): Agent[] {
  const subagents = design.agents.filter((agent) => agent.kind === 'subagent' && agent.contract);
  const position = (agent: Agent) => {
    const index = design.hops.findIndex((hop) => hop.to === agent.id);
    return index < 0 ? design.hops.length : index;
  };
  return [...subagents].sort((x, y) => position(x) - position(y));
}

const addCheck: ChangeMaker = (design) => {
  const candidates = [...subagentsInCallOrder(design)].sort(
    (x, y) => x.contract!.checks.length - y.contract!.checks.length,
  );
  for (const agent of candidates) {
    const check = CHECK_CATALOGUE.find(
      (item) => !agent.contract!.checks.some((known) => known.name === item.name),
    );
    if (!check) continue;
    agent.contract!.checks.push({ ...check });
    return {
      design,
      summary: `${agent.id}: new check ${check.name} (${check.description})`,
      impact: `${agent.id} reports ${check.name} as true or false, and the workspace records the outcome.`,
      verification: `The next report of ${agent.id} lists ${check.name} with a value.`,
    };
  }
  return undefined;
};

const addReturnHop: ChangeMaker = (design) => {
  const ordered = subagentsInCallOrder(design);
  if (ordered.length < 2) return undefined;
  const first = ordered[0]!;
  const source = [...ordered].reverse().find((agent) => agent.contract!.checks.length > 0) ?? ordered.at(-1)!;
  if (source.id === first.id) return undefined;
  if (design.hops.some((hop) => hop.from === source.id && hop.to === first.id)) return undefined;
  const added: string[] = [];
  let flag = source.contract!.fields.find((field) => field.type === 'boolean');
  if (!flag) {
    flag = { name: 'approved', type: 'boolean', description: 'True when every check passed.' };
    source.contract!.fields.push(flag);
    added.push(`field ${flag.name}`);
  }
  if (source.contract!.checks.length === 0) {
    source.contract!.checks.push({ ...CHECK_CATALOGUE[0]! });
    added.push(`check ${CHECK_CATALOGUE[0]!.name}`);
  }
  const condition = `${flag.name} is false`;
  design.hops.push({ from: source.id, to: first.id, condition });
  return {
    design,
    summary: `new hop ${source.id} → ${first.id}, only if ${condition}${added.length > 0 ? `; ${source.id}: new ${added.join(' and ')}` : ''}`,
    impact: `When ${source.id} finds a problem, ${first.id} redoes its part instead of the problem reaching the workspace.`,
    verification: `A run where ${source.id} reports ${flag.name}: false shows a second call of ${first.id}.`,
  };
};

const addField: ChangeMaker = (design) => {
  const fields = [
    { name: 'checks_passed', type: 'integer', description: 'How many of this agent’s checks passed.' },
    { name: 'problems', type: 'list', description: 'Problems found, each with the file it concerns.' },
  ];
  for (const field of fields) {
    const agent = subagentsInCallOrder(design).find(
      (candidate) => !candidate.contract!.fields.some((known) => known.name === field.name),
    );
    if (!agent) continue;
    agent.contract!.fields.push({ ...field });
    return {
      design,
      summary: `${agent.id}: new contract field ${field.name} (${field.type})`,
      impact: `The orchestrator sees ${field.name} in every report of ${agent.id}.`,
      verification: `The next report of ${agent.id} has a ${field.name} line.`,
    };
  }
  return undefined;
};

/**
 * The first of the judge's points against the candidate in the latest comparison of the history ("The judge's points
 * against v2 (workspace A):" and its list), if that comparison lists any.
 */
function latestJudgePoint(text: string): string | undefined {
  const comparisons = text.split(/^## \d+\. /m);
  if (comparisons.length < 2) return undefined;
  const latest = comparisons.at(-1)!;
  // The candidate's list comes first; the opponent's ("…, where it fell short:") is not the candidate's to fix.
  return /^The judge's points against (?![^\n]*where it fell short)[^\n]*:\n- (.+)$/m.exec(latest)?.[1];
}

/** The first sentence of the latest rationale in the comparison history, if there is one. */
function latestRationaleSentence(text: string): string | undefined {
  const quotes = [...text.matchAll(/^Rationale[^\n]*:\n\n((?:> .*\n?)+)/gm)];
  const last = quotes.at(-1)?.[1];
  if (!last) return undefined;
  const joined = last
    .split('\n')
    .map((line) => line.replace(/^> ?/, ''))
    .join(' ')
    .trim();
  return /^(.*?[.!?])(\s|$)/.exec(joined)?.[1] ?? joined.slice(0, 200);
}
