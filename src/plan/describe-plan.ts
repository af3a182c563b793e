import { textTable } from '../text-table.js';
import type { Figure, WorkCount } from './plan-types.js';
import type { PlanCost } from './plan-cost.js';
import type { RunPlan } from './run-plan.js';

/** A count, with the most the configuration allows after it when that is more: `8 (≤ 12)`. */
export function describeCount(count: WorkCount): string {
  return count.upTo > count.count ? `${count.count} (≤ ${count.upTo})` : `${count.count}`;
}

export function describeSeconds(seconds: number): string {
  const total = Math.round(seconds);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const rest = total % 60;
  if (hours > 0) return `${hours} h ${String(minutes).padStart(2, '0')} min`;
  if (minutes > 0) return `${minutes} min ${String(rest).padStart(2, '0')} s`;
  return `${rest} s`;
}

export function describeAmount(value: number, unit = ''): string {
  const scaled =
    value >= 1e9
      ? `${(value / 1e9).toFixed(2)} G`
      : value >= 1e6
        ? `${(value / 1e6).toFixed(2)} M`
        : value >= 1e4
          ? `${(value / 1e3).toFixed(1)} k`
          : `${Math.round(value)}${unit ? ' ' : ''}`;
  return `${scaled}${unit}`.trim();
}

const withBasis = (text: string, figure: Figure) => `${text} (${figure.basis})`;

/** The whole plan, as `mass plan` prints it. */
export function describePlan(plan: RunPlan, cost: PlanCost): string {
  const lines = [
    `Plan of ${plan.name}: ${plan.rounds} round(s) over ${plan.tasks} task(s)` +
      (plan.evaluationTasks > 0 ? `, the evaluation on ${plan.evaluationTasks} task(s)` : ''),
    '',
  ];
  const rows = plan.stages.map((stage) => [
    `${stage.generation ?? ''} ${stage.stage}`.trim(),
    describeCount(stage.episodes),
    describeCount(stage.judgments),
    describeCount(stage.judgeCalls),
    describeCount(stage.optimizerCalls),
    stage.seconds ? describeSeconds(stage.seconds.value) : '—',
  ]);
  const { totals } = plan;
  rows.push([
    'total',
    describeCount(totals.episodes),
    describeCount(totals.judgments),
    describeCount(totals.judgeCalls),
    describeCount(totals.optimizerCalls),
    describeSeconds(plan.time.seconds),
  ]);
  lines.push(
    ...textTable(['stage', 'episodes', 'judgments', 'judge calls', 'optimizer calls', 'time'], rows).map(
      (line) => `  ${line}`,
    ),
    '',
    'Counts rest on the configuration, as the stages plan their work; (≤ n) is the most it allows (top-ups, arbitration, adaptive rounds).',
    'Judge calls are before repairs; a judgment in both A/B orders is two.',
  );
  const notes = [plan.outcome, ...new Set(plan.stages.flatMap((stage) => stage.notes))];
  lines.push(`The counts assume: ${notes.join('; ')}.`);
  lines.push('', 'Tokens per role:');
  for (const role of plan.roles) {
    const prompt = role.promptTokens
      ? withBasis(`${describeAmount(role.promptTokens.value)} in`, role.promptTokens)
      : 'input not bounded by any budget (give --like)';
    lines.push(
      `  ${role.role} (${role.endpoint.model}): ${role.units} ${role.unit}${role.units === 1 ? '' : 's'}, ` +
        `${prompt}, ${withBasis(`${describeAmount(role.completionTokens.value)} out`, role.completionTokens)}`,
    );
  }
  lines.push(
    '',
    `Time: ${describeSeconds(plan.time.seconds)} in all, the stages one after another (${plan.time.basis || 'nothing measured'})` +
      (plan.time.missing.length > 0 ? `; not estimated: ${plan.time.missing.join(', ')}` : ''),
    `Training: ${plan.training.steps} step(s) per generation` +
      (plan.training.windowsPerStep > 0 ? `, ${plan.training.windowsPerStep} windows each` : '') +
      ` (${plan.training.basis}); GPU memory: ${plan.training.memory}`,
    withBasis(
      `Disk: ${describeAmount(plan.disk.value, 'B')} for ${plan.totals.episodes.count} episodes`,
      plan.disk,
    ),
    `Cost: ${describePlanCost(cost)}`,
  );
  if (plan.like) lines.push('', ...describeAgainstLike(plan));
  return lines.join('\n');
}

/** Each stage's planned counts and time beside what the `--like` run's records say it did. */
function describeAgainstLike(plan: RunPlan): string[] {
  const like = plan.like!;
  const same = (stage: { stage: string; generation: string | null }) => (entry: typeof stage) =>
    entry.stage === stage.stage && entry.generation === stage.generation;
  const rows = plan.stages.flatMap((stage) => {
    const recorded = like.recorded.find(same(stage));
    const measured = like.stages.find(same(stage));
    if (!recorded && !measured) return [];
    const pair = (planned: WorkCount, actual: WorkCount | undefined) =>
      `${describeCount(planned)} / ${actual ? actual.count : '—'}`;
    return [
      [
        `${stage.generation ?? ''} ${stage.stage}`.trim(),
        pair(stage.episodes, recorded?.episodes),
        pair(stage.judgeCalls, recorded?.judgeCalls),
        pair(stage.optimizerCalls, recorded?.optimizerCalls),
        `${stage.seconds ? describeSeconds(stage.seconds.value) : '—'} / ${measured ? describeSeconds(measured.seconds) : '—'}`,
      ],
    ];
  });
  if (rows.length === 0) return [];
  return [
    `Planned / recorded in ${like.name} (time: its stage's first step's start to its last step's end; stages overlap):`,
    ...textTable(['stage', 'episodes', 'judge calls', 'optimizer calls', 'time'], rows).map(
      (line) => `  ${line}`,
    ),
  ];
}

export function describePlanCost(cost: PlanCost): string {
  if (cost.endpoints.length === 0) {
    return 'no prices (give an endpoint prices: { input, output } per million tokens)';
  }
  const parts = cost.endpoints.map(
    (entry) => `${entry.role} $${entry.usd.value.toFixed(2)} (${entry.usd.basis})`,
  );
  const unpriced = cost.unpriced.length > 0 ? `; no prices for ${cost.unpriced.join(', ')}` : '';
  return `$${cost.totalUsd.toFixed(2)}: ${parts.join(', ')}${unpriced}`;
}

/** The plan in a few lines, as `mass rsi`, `mass eval` and `mass benchmark` print it before they start. */
export function describePlanCompact(plan: RunPlan, cost: PlanCost, command: string): string {
  const { totals } = plan;
  const stages = [...new Set(plan.stages.map((stage) => stage.stage))].join(', ');
  return [
    `${command}: plan: ${describeCount(totals.episodes)} episodes, ${describeCount(totals.judgeCalls)} judge calls, ` +
      `${describeCount(totals.optimizerCalls)} optimizer calls (${stages})`,
    `${command}: about ${describeSeconds(plan.time.seconds)} (${plan.time.basis || 'nothing measured'})` +
      (plan.time.missing.length > 0 ? `, not counting ${plan.time.missing.join(', ')}` : '') +
      `; disk ${describeAmount(plan.disk.value, 'B')}; cost ${describePlanCost(cost)}; \`mass plan\` says more`,
  ].join('\n');
}
