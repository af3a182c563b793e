import type { StepGroup } from './group-counts.js';
import type { Eta, GroupStatus } from './run-status.js';
import type { StepRow } from './run-steps.js';

/** Mean duration of a done step, per stage and kind, over the whole run (every generation). */
export type MeanDurations = Map<string, { meanMs: number; count: number }>;

export function meanDurations(groups: readonly StepGroup[]): MeanDurations {
  const sums = new Map<string, { total: number; count: number }>();
  for (const group of groups) {
    for (const step of group.steps) {
      if (step.status !== 'done' || step.durationMs === null) continue;
      const key = `${group.place.stage}/${step.kind}`;
      const sum = sums.get(key) ?? { total: 0, count: 0 };
      sum.total += step.durationMs;
      sum.count++;
      sums.set(key, sum);
    }
  }
  return new Map([...sums].map(([key, sum]) => [key, { meanMs: sum.total / sum.count, count: sum.count }]));
}

/**
 * How many steps of the stage ran at once, measured: the busy time of its done steps over the span from the first
 * start to the last finish. 1 when fewer than two steps are done.
 */
function parallelism(steps: readonly StepRow[]): number {
  const done = steps.filter((step) => step.status === 'done' && step.durationMs !== null && step.finishedAt);
  if (done.length < 2) return 1;
  const busy = done.reduce((total, step) => total + step.durationMs!, 0);
  const start = Math.min(...done.map((step) => Date.parse(step.startedAt)));
  const end = Math.max(...done.map((step) => Date.parse(step.finishedAt!)));
  return end > start ? Math.max(1, busy / (end - start)) : 1;
}

/**
 * A stage's time left: per kind, the steps planned and not done times that kind's mean measured duration (less what
 * the ones in flight have already run), over the parallelism the stage has shown. Kinds with nothing planned add
 * nothing; a kind not measured yet makes the figure a lower bound, and the basis says so.
 */
export function stageEta(
  stage: string,
  groups: ReadonlyArray<{ group: StepGroup; status: GroupStatus }>,
  means: MeanDurations,
  nowMs: number,
): Eta {
  if (groups.every(({ status }) => status.state === 'done')) return { remainingMs: 0, basis: 'finished' };
  let workMs = 0;
  let steps = 0;
  const unmeasured = new Set<string>();
  const unplanned = new Set<string>();
  for (const { group, status } of groups) {
    if (status.state === 'done') continue;
    if (group.plan === undefined) unplanned.add(group.place.group);
    for (const count of status.kinds) {
      if (count.planned === null) continue;
      const left = Math.max(0, count.planned - count.done);
      if (left === 0) continue;
      const mean = means.get(`${stage}/${count.kind}`);
      if (!mean) {
        unmeasured.add(count.kind);
        continue;
      }
      steps += left;
      workMs += left * mean.meanMs;
      for (const step of group.steps) {
        if (step.kind === count.kind && step.status === 'started') {
          workMs -= Math.min(mean.meanMs, Math.max(0, nowMs - Date.parse(step.startedAt)));
        }
      }
    }
  }
  const across = parallelism(groups.flatMap(({ group }) => group.steps));
  const notes = [
    `${steps} steps left at their measured mean durations, ${across.toFixed(1)} at a time as measured`,
    ...(unmeasured.size > 0 ? [`not counted, none measured yet: ${[...unmeasured].join(', ')}`] : []),
    ...(unplanned.size > 0 ? [`no recorded plan: ${[...unplanned].join(', ')}`] : []),
  ];
  if (steps === 0 && unmeasured.size > 0) {
    return { remainingMs: null, basis: `nothing measured yet for ${[...unmeasured].join(', ')}` };
  }
  if (steps === 0 && unplanned.size > 0) return { remainingMs: null, basis: notes.slice(1).join('; ') };
  return { remainingMs: Math.max(0, workMs / across), basis: notes.join('; ') };
}
