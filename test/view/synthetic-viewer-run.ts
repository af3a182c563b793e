// A small run directory for the viewer's tests, written from the real record schemas: one task's search (reference,
// v0, v1, with a verdict and the optimizer's reasons) and its three episodes, whose proxy logs hold an orchestrator
// that delegates to a subagent. Everything a model or an agent could have written carries payloads that would set
// `window.__pwned` or open a dialog if they ever ran; one episode's record is damaged on purpose.
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { EpisodeRecord } from '../../src/records/episode-record.js';
import { buildThreads } from '../../src/records/threads.js';
import { JudgmentRow } from '../../src/records/evaluation-records.js';
import { PairwiseJudgmentRecord } from '../../src/records/judgment-record.js';
import { OptimizerCallRecord } from '../../src/records/optimizer-outcome.js';
import type { ProxyLogRow } from '../../src/proxy/log-row.js';
import { TaskSearchRecord, type SearchEpisode } from '../../src/records/search-records.js';

export const PAYLOAD = {
  script: '<script>window.__pwned = "script"; alert("script")</script>',
  handler: '<img src=x onerror="window.__pwned = \'onerror\'; alert(1)">',
  link: '<a href="javascript:window.__pwned=\'link\'">open</a>',
  markdownLink: '[click me](javascript:window.__pwned=1)',
};
const ALL = Object.values(PAYLOAD).join(' ');
/** A workspace file whose name is itself a payload (a valid Linux file name: no slash). */
export const HOSTILE_FILE_NAME = '<img src=x onerror=alert(7)>.txt';
export const TASK = 'demo-potency';
export const GENERATION = 'L0';
export const SUBAGENT_PROMPT = `Fit the Hill curve to data/doses.csv. ${PAYLOAD.script}`;
export const FINAL_ANSWER = `All stages are done. ${ALL}`;

/** The smallest valid PNG: one transparent pixel. */
const PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const workflow = (instruction: string) => ({
  schemaVersion: 1 as const,
  agents: [
    {
      id: 'lead',
      kind: 'orchestrator' as const,
      role: `Lead ${PAYLOAD.handler}`,
      instruction: 'Delegate the fit.',
    },
    {
      id: 'analyst',
      kind: 'subagent' as const,
      role: 'Analyst',
      instruction,
      contract: { fields: [{ name: 'ec50', type: 'number' as const, description: 'EC50.' }], checks: [] },
    },
  ],
  hops: [
    { from: 'lead', to: 'analyst' },
    { from: 'analyst', to: 'lead' },
  ],
});

function row(
  seq: number,
  messages: unknown[],
  message: Record<string, unknown>,
  durationMs: number,
): ProxyLogRow {
  return {
    schemaVersion: 1,
    seq,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:01.000Z',
    durationMs,
    method: 'POST',
    path: '/v1/chat/completions',
    status: 200,
    model: 'toy',
    stream: true,
    request: { model: 'toy', messages },
    requestIsJson: true,
    response: {
      kind: 'completion',
      completion: {
        id: `c${seq}`,
        model: 'toy',
        message: { role: 'assistant', ...message } as never,
        finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop',
        usage: {
          prompt_tokens: 1000 + seq,
          completion_tokens: 50 + seq,
          completion_tokens_details: { reasoning_tokens: 7 },
        },
      },
    },
    bytes: { request: 100, response: 100 },
    clientDisconnected: false,
    usageInjected: false,
    error: null,
  };
}

/** An orchestrator that delegates once, the subagent's own thread, and the orchestrator's final answer. */
export function proxyLog(): ProxyLogRow[] {
  const system = { role: 'system', content: 'You are Qwen Code, an interactive CLI agent.' };
  const user = { role: 'user', content: [{ type: 'text', text: `Analyse the doses. ${PAYLOAD.handler}` }] };
  const delegation = {
    content: '',
    reasoning_content: `I should delegate. ${PAYLOAD.script}`,
    tool_calls: [
      {
        id: 'call_1',
        type: 'function',
        function: {
          name: 'agent',
          arguments: JSON.stringify({ description: `analyst ${PAYLOAD.handler}`, prompt: SUBAGENT_PROMPT }),
        },
      },
    ],
  };
  const subagentSystem = { role: 'system', content: 'You are a general-purpose subagent for Qwen Code.' };
  const subagentUser = { role: 'user', content: [{ type: 'text', text: SUBAGENT_PROMPT }] };
  const subagentAnswer = {
    content: `The EC50 is 5.9 µM. ${ALL}`,
    reasoning_content: 'The subagent reasons here.',
  };
  const toolResult = { role: 'tool', tool_call_id: 'call_1', content: `Report from analyst: ${ALL}` };
  return [
    row(0, [system, user], delegation, 120),
    row(1, [subagentSystem, subagentUser], subagentAnswer, 340),
    row(2, [system, user, { role: 'assistant', ...delegation }, toolResult], { content: FINAL_ANSWER }, 56),
  ];
}

export function episodeRecord(episodeId: string, workflowHash: string | null) {
  const tokens = { promptTokens: 3003, completionTokens: 153, reasoningTokens: 21 };
  return {
    episodeId,
    task: { id: TASK, dir: '/tasks/demo-potency' },
    workflowHash,
    teacher: false,
    seed: 7,
    dataSeed: 7,
    model: 'toy',
    baseUrl: 'http://127.0.0.1:1/v1',
    status: 'success' as const,
    failure: null,
    timings: {
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T00:00:09.000Z',
      durationMs: 9000,
      harnessMs: 8000,
    },
    usage: { total: tokens, perThread: [] },
    modelCalls: 3,
    failedModelCalls: 0,
    delegations: 1,
    integrity: {
      assets: [{ path: 'data/doses.csv', before: 'abc', after: 'abc' }],
      tampered: false,
      tamperedPaths: [],
    },
    sandbox: {
      enabled: true,
      exitCode: 0,
      signal: null,
      limitExceeded: null,
      cpuSeconds: 1.5,
      peakMemoryBytes: 50_000_000,
    },
    harness: { name: 'qwen-code' as const, version: '0.24.4' },
  };
}

async function writeEpisode(
  root: string,
  episodeId: string,
  options: { report: string; damaged?: boolean; folder?: string },
): Promise<void> {
  const directory = join(root, options.folder ?? 'episodes', episodeId);
  const workspace = join(directory, 'workspace');
  await mkdir(join(workspace, 'data'), { recursive: true });
  const rows = proxyLog();
  await writeFile(
    join(directory, 'requests.jsonl'),
    rows.map((item) => JSON.stringify(item)).join('\n') + '\n',
  );
  await writeFile(
    join(directory, 'threads.jsonl'),
    buildThreads(rows)
      .map((thread) => JSON.stringify(thread))
      .join('\n') + (options.damaged ? '\n{"schemaVersion": 1, "threadId": ' : '\n'),
  );
  if (options.damaged)
    await writeFile(join(directory, 'episode.json'), '{"schemaVersion": 2, "kind": "episode", "episodeId": ');
  else await EpisodeRecord.write(join(directory, 'episode.json'), episodeRecord(episodeId, 'hash-1'));
  await writeFile(join(workspace, 'report.md'), options.report);
  await writeFile(
    join(workspace, 'analysis.py'),
    `# fit ${PAYLOAD.script}\nimport math\nprint("ec50 = %.2f" % 5.9)\n`,
  );
  await writeFile(join(workspace, 'data', 'doses.csv'), 'dose,response\n1,0.1\n10,0.9\n');
  await writeFile(join(workspace, 'figure.png'), PIXEL_PNG);
  await writeFile(
    join(workspace, 'evil.svg'),
    `<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned='svg'; alert(2)"><script>alert(3)</script></svg>`,
  );
  await writeFile(
    join(workspace, 'evil.html'),
    `<html><body>${ALL}<script>parent.__pwned = 'html'</script></body></html>`,
  );
  await writeFile(join(workspace, HOSTILE_FILE_NAME), `named to attack ${ALL}`);
  await symlink('/etc/passwd', join(workspace, 'passwd-link'));
  await symlink('../episode.json', join(workspace, 'record-link'));
}

function searchEpisode(episodeId: string): SearchEpisode {
  return {
    episodeId,
    dir: `episodes/${episodeId}`,
    status: 'success',
    reason: null,
    execution: {
      status: 'success',
      failure: null,
      delegations: 1,
      subagentThreads: 1,
      modelCalls: 3,
      failedModelCalls: 0,
      tokens: {
        prompt: 3003,
        completion: 153,
        reasoning: 21,
        orchestratorCompletion: 100,
        subagentCompletion: 53,
      },
      durationMs: 9000,
      limitExceeded: null,
      tamperedPaths: [],
    },
  };
}

const usage = { promptTokens: 10, completionTokens: 5, reasoningTokens: 0, totalTokens: 15 };
const bundle = {
  source: 'episode' as const,
  tokenizer: 'approximate',
  tokens: 100,
  budgetTokens: 1000,
  budgetScale: 1,
  sections: [],
  files: { total: 3, bytes: 300, skippedFolders: 0, walkLimitReached: false },
  preflight: [],
  integrity: { tampered: false, findings: [], links: 0 },
  episode: null,
};
export const RATIONALE = `Workspace A fits the curve; B does not. ${ALL}`;

/** Writes the run under `root` and returns the episode ids: reference, v0 (damaged record), v1. */
export async function writeViewerRun(root: string): Promise<{ reference: string; v0: string; v1: string }> {
  const ids = {
    reference: `${GENERATION}-${TASK}-reference`,
    v0: `${GENERATION}-${TASK}-v0`,
    v1: `${GENERATION}-${TASK}-v1`,
  };
  await mkdir(root, { recursive: true });
  await writeFile(join(root, 'config.yaml'), `name: viewer-test\n# ${PAYLOAD.script}\n`);
  await writeEpisode(root, ids.reference, { report: '# Reference\n\nNo team.\n' });
  await writeEpisode(root, ids.v0, { report: '# v0 report\n\nEC50 5.8\n', damaged: true });
  await writeEpisode(root, ids.v1, {
    report: `# Potency ${PAYLOAD.script}\n\nThe **EC50** is 5.9 µM ${PAYLOAD.handler}.\n\n- ${PAYLOAD.link}\n- ${PAYLOAD.markdownLink}\n\n![fit](figure.png)\n\n| metric | value |\n| --- | --- |\n| ec50 | 5.9 |\n`,
  });
  const base = join(root, 'search', GENERATION, TASK);
  await mkdir(join(base, 'v0'), { recursive: true });
  await mkdir(join(base, 'v1', 'judgments'), { recursive: true });
  await writeFile(join(base, 'v0', 'workflow.json'), JSON.stringify(workflow('Fit the curve.'), null, 2));
  await writeFile(
    join(base, 'v1', 'workflow.json'),
    JSON.stringify(workflow('Fit a Hill curve and report the EC50.'), null, 2),
  );
  await OptimizerCallRecord.write(join(base, 'v1', 'optimizer.json'), {
    taskId: TASK,
    currentLabel: 'v0',
    outcome: {
      ok: true,
      model: 'toy',
      endpoint: 'toy',
      prompt: { system: 'design', user: 'improve' },
      maxChangeFraction: null,
      attempts: [
        {
          attempt: 1,
          purpose: 'initial',
          message: 'improve',
          output: { content: '{}', reasoning: null, finishReason: 'stop' },
          usage,
          durationMs: 10,
          outcome: { ok: true, changeFraction: 0.2 },
        },
      ],
      usage,
      proposal: {
        design: workflow('Fit a Hill curve and report the EC50.'),
        changes: ['analyst: name the Hill model'],
        why: `The analyst fitted the wrong curve. ${ALL}`,
        evidenceUsed: ['the v0 verdict'],
        expectedImpact: 'a correct EC50',
        verificationChecks: ['the report names the Hill slope'],
      },
      changeFraction: 0.2,
      diffText: 'analyst: instruction changed',
    },
  });
  await PairwiseJudgmentRecord.write(join(base, 'v1', 'judgments', 'v1-vs-v0.json'), {
    task: TASK,
    mode: 'random',
    seed: 3,
    orderKey: 'v1-vs-v0',
    model: 'toy-judge',
    sampling: {},
    maxRepairAttempts: 1,
    x: { label: 'v1', bundle },
    y: { label: 'v0', bundle },
    judgments: [
      {
        shownAsA: 'x',
        prompt: { system: 'judge', user: 'compare' },
        status: 'ok',
        verdict: { winner: 'A', rationale: RATIONALE },
        winner: 'x',
        failure: null,
        attempts: [
          {
            attempt: 1,
            repairRequest: null,
            rawOutput: '{"winner":"A"}',
            reasoning: null,
            finishReason: 'stop',
            parse: { ok: true, verdict: { winner: 'A', rationale: RATIONALE } },
            usage,
            latencyMs: 5,
          },
        ],
        usage,
      },
    ],
    status: 'decided',
    winner: 'x',
    ordersAgree: null,
    failure: null,
    usage,
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 5,
  });
  await TaskSearchRecord.write(join(base, 'result.json'), {
    generation: GENERATION,
    task: TASK,
    championRule: 'paper',
    judgeMode: 'random',
    reference: searchEpisode(ids.reference),
    champion: 'v1',
    championDesign: workflow('Fit a Hill curve and report the EC50.'),
    championEpisode: ids.v1,
    beatsReference: true,
    championHistory: [
      { version: 'v0', champion: 'v0' },
      { version: 'v1', champion: 'v1' },
    ],
    iterations: [
      {
        version: 'v0',
        proposal: null,
        episode: searchEpisode(ids.v0),
        decision: null,
        maxChangeFraction: null,
      },
      {
        version: 'v1',
        proposal: null,
        episode: searchEpisode(ids.v1),
        decision: {
          version: 'v1',
          championBefore: 'v0',
          championAfter: 'v1',
          promoted: true,
          matches: [
            {
              first: 'v1',
              second: 'v0',
              purpose: 'candidate-vs-champion',
              result: 'first',
              rationale: RATIONALE,
              judgment: `search/${GENERATION}/${TASK}/v1/judgments/v1-vs-v0.json`,
            },
          ],
          comparisons: [],
        },
        maxChangeFraction: null,
      },
    ],
    counts: { episodes: 3, failedEpisodes: 0, judgments: 1, failedJudgments: 0, failedProposals: 0 },
  });
  await writeEvaluation(root);
  return ids;
}

export const EVALUATION = { name: 'demo', candidate: `L1-${TASK}-bare-0`, baseline: `L0-${TASK}-bare-0` };

/** An evaluation of two bare-task episodes, judged once in each order. */
async function writeEvaluation(root: string): Promise<void> {
  const folder = join('evaluation', EVALUATION.name, 'episodes');
  await writeEpisode(root, EVALUATION.candidate, { report: '# L1 report\n\nEC50 5.9\n', folder });
  await writeEpisode(root, EVALUATION.baseline, { report: '# L0 report\n\nEC50 4\n', folder });
  const judgment = (order: 'candidate-first' | 'baseline-first', winner: string) => ({
    schemaVersion: 1,
    kind: 'evaluation-judgment',
    key: `evaluation/demo/judgment/${order}`,
    sample: 'evaluation',
    task: TASK,
    condition: 'bare',
    replicate: 0,
    candidate: 'L1',
    baseline: 'L0',
    candidateEpisode: EVALUATION.candidate,
    baselineEpisode: EVALUATION.baseline,
    judge: 'external-judge',
    judgeModel: 'judge-model',
    seed: 11,
    order,
    status: 'ok',
    outcome: 'win',
    repairs: 0,
    promptHashes: { system: 'a', user: 'b' },
    attempts: [
      {
        rawOutput: '{}',
        finishReason: 'stop',
        parse: { ok: true, winner, rationale: `The L1 workspace is better (${order}). ${PAYLOAD.script}` },
        usage,
      },
    ],
    usage,
    failure: null,
  });
  const rows = [judgment('candidate-first', 'A'), judgment('baseline-first', 'B')];
  await writeFile(
    join(root, 'evaluation', EVALUATION.name, 'judgments.jsonl'),
    rows.map((row) => JSON.stringify(JudgmentRow.parse(row))).join('\n') + '\n',
  );
}
