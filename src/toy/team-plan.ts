import { mentions, type DeliverableSpec } from './task-reading.js';
import type { ReadField, ReadHop, ReadWorkflow } from './workflow-reading.js';

/**
 * The toy orchestrator's plan: the team's members with the files each writes, and the call order. Delegation is
 * stateless: every turn replays the hops against the reports received so far to find the next call.
 */

export interface TeamMember {
  id: string;
  role: string;
  instruction: string;
  fields: ReadField[];
  checks: Array<{ name: string; description: string }>;
  files: string[];
}

export interface TeamPlan {
  orchestratorId: string;
  members: TeamMember[];
  hops: ReadHop[];
}

export interface CompletedCall {
  agentId: string;
  report: string;
}

export interface NextCall {
  agentId: string;
  attempt: number;
  reworkReason?: string;
}

/**
 * Members from the workflow. Each deliverable has one owner: the first subagent in call order whose role,
 * instruction or contract mentions it (later ones read it); one nobody mentions goes to the first subagent called,
 * a report to the last one.
 */
export function teamFromWorkflow(workflow: ReadWorkflow, deliverables: DeliverableSpec[]): TeamPlan {
  const subagents = workflow.agents.filter((agent) => !agent.isOrchestrator);
  const callOrder = [...new Set(workflow.hops.map((hop) => hop.to))].filter((id) =>
    subagents.some((agent) => agent.id === id),
  );
  const order = (id: string) => (callOrder.includes(id) ? callOrder.indexOf(id) : callOrder.length);
  const members: TeamMember[] = subagents.map((agent) => ({
    id: agent.id,
    role: agent.role,
    instruction: agent.instruction,
    fields: agent.fields,
    checks: agent.checks,
    files: [],
  }));
  const byCallOrder = [...members].sort((x, y) => order(x.id) - order(y.id));
  const briefs = new Map(
    subagents.map((agent) => [
      agent.id,
      [
        agent.role,
        agent.instruction,
        ...agent.fields.map((field) => field.description),
        ...agent.checks.map((check) => check.description),
      ].join('\n'),
    ]),
  );
  for (const deliverable of deliverables) {
    const owner =
      byCallOrder.find((member) => mentions(briefs.get(member.id)!, deliverable.path)) ??
      (deliverable.kind === 'report' ? byCallOrder.at(-1) : byCallOrder[0]);
    owner?.files.push(deliverable.path);
  }
  return { orchestratorId: workflow.orchestratorId, members, hops: workflow.hops };
}

/** The team the orchestrator forms on its own for a bare task: an analyst, then a reporter. */
export function implicitTeam(deliverables: DeliverableSpec[]): TeamPlan {
  const isReport = (deliverable: DeliverableSpec) => deliverable.kind === 'report';
  return {
    orchestratorId: 'lead',
    members: [
      {
        id: 'analyst',
        role: 'Analyst who runs the analysis.',
        instruction: 'Analyse the data and write the result files.',
        fields: [
          { name: 'files_written', type: 'list', description: 'The files written.', fields: [] },
          { name: 'checks_passed', type: 'integer', description: 'How many checks passed.', fields: [] },
        ],
        checks: [{ name: 'outputs_complete', description: 'Every result file has every required key.' }],
        files: deliverables.filter((deliverable) => !isReport(deliverable)).map((item) => item.path),
      },
      {
        id: 'reporter',
        role: 'Writer who reports the results.',
        instruction: 'Read the result files and write the report.',
        fields: [{ name: 'report_file', type: 'path', description: 'The report.', fields: [] }],
        checks: [],
        files: deliverables.filter(isReport).map((item) => item.path),
      },
    ],
    hops: [
      { from: 'lead', to: 'analyst' },
      { from: 'analyst', to: 'lead' },
      { from: 'lead', to: 'reporter' },
      { from: 'reporter', to: 'lead' },
    ],
  };
}

/**
 * The next delegation, or undefined when the plan is done. Hops to the orchestrator are returns and need no call. A
 * conditional hop is taken once, when the last report of its source meets the condition; it re-works its target and
 * every member called after it (their work built on the faulty result).
 */
export function nextCall(plan: TeamPlan, done: CompletedCall[]): NextCall | undefined {
  const members = new Set(plan.members.map((member) => member.id));
  const reports = new Map<string, string>();
  const order: string[] = [];
  const attempts = new Map<string, number>();
  let consumed = 0;
  for (const hop of plan.hops) {
    if (hop.to === plan.orchestratorId || !members.has(hop.to)) continue;
    let targets: Array<{ agentId: string; reason?: string }>;
    if (hop.condition) {
      const report = reports.get(hop.from);
      if (report === undefined || !conditionHolds(hop.condition, report)) continue;
      const start = order.lastIndexOf(hop.to);
      const chain = start < 0 ? [hop.to] : [...new Set(order.slice(start))];
      const reason = `${hop.from} reported that ${hop.condition}`;
      targets = chain.map((agentId) => ({ agentId, reason }));
    } else {
      targets = [{ agentId: hop.to }];
    }
    for (const target of targets) {
      const call = done[consumed];
      if (call) {
        consumed++;
        reports.set(call.agentId, call.report);
        order.push(call.agentId);
        attempts.set(call.agentId, (attempts.get(call.agentId) ?? 0) + 1);
        continue;
      }
      return {
        agentId: target.agentId,
        attempt: (attempts.get(target.agentId) ?? 0) + 1,
        ...(target.reason ? { reworkReason: target.reason } : {}),
      };
    }
  }
  return undefined;
}

/**
 * Reads a hop condition against a report: "<field> is false|true" compares that line of the report; any other
 * condition holds when the report shows a failed check or a problem.
 */
export function conditionHolds(condition: string, report: string): boolean {
  const named = /\b([A-Za-z][A-Za-z0-9_]*) is (false|true)\b/i.exec(condition);
  if (named) {
    const line = new RegExp(`^\\s*- ${named[1]}: (\\S+)`, 'm').exec(report);
    if (line) return line[1]!.toLowerCase() === named[2]!.toLowerCase();
  }
  return (
    /^\s*- \w+: false$/m.test(report) ||
    /^Problems: (?!none$)/m.test(report) ||
    /^- completed: false/m.test(report)
  );
}
