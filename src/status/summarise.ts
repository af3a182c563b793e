import { inFlightCalls, inFlightEpisodes, problems, throughput } from './activity.js';
import { stageEta, meanDurations } from './eta.js';
import { combinedState, countGroup, groupSteps, type StepGroup } from './group-counts.js';
import type { RunRecords } from './read-run.js';
import type { GenerationStatus, GroupStatus, RunState, RunStatus, StageStatus } from './run-status.js';
import { GENERATION_STAGES } from './step-place.js';

/** How far back `mass status` measures throughput by default: five minutes. */
export const DEFAULT_WINDOW_MS = 5 * 60_000;

/** The run's status from its records: stages and their counts, what is in flight, throughput, problems, ETAs. */
export function summariseRun(records: RunRecords, windowMs = DEFAULT_WINDOW_MS): RunStatus {
  const alive = records.holder.alive;
  const groups = groupSteps(records.steps, records.plans).map((group) => ({
    group,
    status: countGroup(group, alive, records.episodes),
  }));
  const means = meanDurations(groups.map(({ group }) => group));
  const stages = stagesOf(groups, alive, means, records.readAtMs);
  const state = runState(alive, stages);
  const pending = stages.filter((stage) => stage.state !== 'done');
  const unknown = pending.filter((stage) => stage.eta.remainingMs === null);
  const remainingMs =
    pending.length === 0
      ? 0
      : unknown.length === pending.length
        ? null
        : sum(pending.map((stage) => stage.eta.remainingMs ?? 0));
  const owner = records.holder.owner;
  return {
    schemaVersion: 1,
    kind: 'run-status',
    run: {
      name: records.name,
      directory: records.directory,
      state,
      holder:
        owner && alive
          ? {
              pid: owner.pid,
              hostname: owner.hostname,
              command: owner.command ?? null,
              since: owner.acquiredAt,
            }
          : null,
    },
    readAt: new Date(records.readAtMs).toISOString(),
    generations: generationsOf(stages),
    stages,
    inFlight: {
      episodes: inFlightEpisodes(records),
      calls: inFlightCalls(records),
      queueJobsOnWorkers: records.queueJobs.filter((job) => job.starts > 0 && !job.finished).length,
    },
    throughput: { windowMs, endpoints: throughput(records, windowMs) },
    problems: problems(records),
    eta: {
      remainingMs,
      finishesAt:
        remainingMs === null || state !== 'running'
          ? null
          : new Date(records.readAtMs + remainingMs).toISOString(),
      basis: runEtaBasis(pending, unknown),
    },
    spending: records.spending,
  };
}

function stagesOf(
  groups: ReadonlyArray<{ group: StepGroup; status: GroupStatus }>,
  alive: boolean,
  means: ReturnType<typeof meanDurations>,
  nowMs: number,
): StageStatus[] {
  const byStage = new Map<string, Array<{ group: StepGroup; status: GroupStatus }>>();
  for (const entry of groups) {
    const { stage, generation, label } = entry.group.place;
    const key = `${stage}\0${generation ?? ''}\0${stage === 'evaluation' ? label : ''}`;
    byStage.set(key, [...(byStage.get(key) ?? []), entry]);
  }
  return [...byStage.values()].map((entries) => {
    const { stage, generation, label } = entries[0]!.group.place;
    return {
      stage,
      generation,
      name: stage === 'evaluation' ? label : null,
      state: combinedState(
        entries.map(({ status }) => status.state),
        alive,
      ),
      groups: entries.map(({ status }) => status),
      eta: stageEta(stage, entries, means, nowMs),
    };
  });
}

function generationsOf(stages: readonly StageStatus[]): GenerationStatus[] {
  const order: readonly string[] = GENERATION_STAGES;
  const latest = new Map<string, StageStatus>();
  for (const stage of stages) {
    if (stage.generation === null || !order.includes(stage.stage) || stage.state === 'waiting') continue;
    const current = latest.get(stage.generation);
    if (!current || order.indexOf(stage.stage) > order.indexOf(current.stage))
      latest.set(stage.generation, stage);
  }
  return [...latest.values()]
    .map((stage) => ({ generation: stage.generation!, stage: stage.stage, state: stage.state }))
    .sort((a, b) => a.generation.localeCompare(b.generation, undefined, { numeric: true }));
}

function runState(alive: boolean, stages: readonly StageStatus[]): RunState {
  if (alive) return 'running';
  return stages.every((stage) => stage.state === 'done') ? 'finished' : 'stopped';
}

export function stageName(stage: Pick<StageStatus, 'stage' | 'generation' | 'name'>): string {
  return [stage.stage, stage.generation ?? stage.name].filter((part) => part !== null).join(' ');
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function runEtaBasis(pending: readonly StageStatus[], unknown: readonly StageStatus[]): string {
  if (pending.length === 0) return 'every planned stage has finished';
  const later = 'stages not planned yet (later generations, an evaluation to come) are not counted';
  if (unknown.length === pending.length)
    return `no unfinished stage has an ETA yet (${unknown.map(stageName).join(', ')}); ${later}`;
  const counted = pending.length - unknown.length;
  return (
    `the sum of ${counted} unfinished stage${counted === 1 ? "'s" : "s'"} ETA${counted === 1 ? '' : 's'}` +
    (unknown.length > 0 ? `; not counted, no ETA yet: ${unknown.map(stageName).join(', ')}` : '') +
    `; ${later}`
  );
}
