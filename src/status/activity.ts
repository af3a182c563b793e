import type { RunRecords } from './read-run.js';
import { liveModelCalls } from './model-calls.js';
import type {
  EndpointThroughput,
  InFlightCall,
  InFlightEpisode,
  InFlightModelCall,
  Problem,
} from './run-status.js';
import { MODEL_CALL_KINDS, placeOfStep } from './step-place.js';

/** A worker's episode with no change to its log for this long is taken to have stopped. */
export const WORKER_SILENCE_MS = 5 * 60_000;

/**
 * The episodes in flight: every episode folder without `episode.json`. One in this process's folders runs while the
 * run's process lives and has written to it since it took the run (an older one was left by a process that stopped);
 * one a queue worker writes runs while its log keeps changing.
 */
export function inFlightEpisodes(records: RunRecords): InFlightEpisode[] {
  const { holder, readAtMs } = records;
  const heldSinceMs = holder.owner === null ? Infinity : Date.parse(holder.owner.acquiredAt);
  return records.episodes
    .filter((episode) => !episode.finished)
    .map((episode) => {
      const calls = episode.log?.calls ?? [];
      const open = episode.log?.open ?? [];
      const starts = [
        ...calls.map((call) => call.endedAtMs - call.durationMs),
        ...open.map((call) => Date.parse(call.startedAt)),
      ];
      const startedMs = starts.length > 0 ? Math.min(...starts) : episode.lastActivityMs;
      const running = episode.staged
        ? readAtMs - episode.lastActivityMs < WORKER_SILENCE_MS
        : holder.alive && episode.lastActivityMs >= heldSinceMs - 1000;
      const current = running
        ? open.reduce<(typeof open)[number] | null>((a, b) => (a && a.seq > b.seq ? a : b), null)
        : null;
      return {
        id: episode.id,
        dir: episode.dir,
        where: episode.staged ? 'worker' : 'local',
        state: running ? 'running' : 'stopped',
        ageMs: Math.max(0, readAtMs - startedMs),
        calls: calls.length,
        promptTokens: calls.reduce((total, call) => total + call.promptTokens, 0),
        completionTokens: calls.reduce((total, call) => total + call.completionTokens, 0),
        currentCall: current
          ? { seq: current.seq, ageMs: Math.max(0, readAtMs - Date.parse(current.startedAt)) }
          : null,
        lastActivityMs: episode.lastActivityMs,
      } satisfies InFlightEpisode;
    })
    .sort((a, b) => b.ageMs - a.ageMs);
}

/**
 * The judge and optimizer calls in flight: their steps recorded as started, each with the model calls it waits on
 * (`model-calls-open.json`); a live model call whose step is of another kind (a search's result) is listed under its
 * own step.
 */
export function inFlightCalls(records: RunRecords): InFlightCall[] {
  const live = liveModelCalls(records.openModelCalls, records.holder);
  const callsOf = (key: string): InFlightModelCall[] =>
    live
      .filter((call) => call.step === key)
      .sort((a, b) => a.seq - b.seq)
      .map((call) => ({
        seq: call.seq,
        role: call.role,
        model: call.model,
        endpoint: call.endpoint,
        ageMs: Math.max(0, records.readAtMs - Date.parse(call.startedAt)),
        promptChars: call.promptChars,
        state: 'waiting' as const,
      }));
  const started = records.steps.filter((step) => step.status === 'started');
  const listed = started
    .map((step) => ({ step, kind: placeOfStep(step.key).kind }))
    .filter(({ step, kind }) => MODEL_CALL_KINDS.has(kind) || live.some((call) => call.step === step.key));
  return listed.map(({ step, kind }) => ({
    key: step.key,
    kind,
    state: records.holder.alive ? 'running' : 'stopped',
    ageMs: Math.max(0, records.readAtMs - Date.parse(step.startedAt)),
    attempts: step.attempts,
    modelCalls: callsOf(step.key),
  }));
}

/**
 * Model calls and output tokens per second over the window (or since the run's first step, if later), per model, from
 * every episode's proxy log.
 */
export function throughput(records: RunRecords, windowMs: number): EndpointThroughput[] {
  const since = records.readAtMs - windowMs;
  const byModel = new Map<string, EndpointThroughput>();
  for (const episode of records.episodes) {
    for (const call of episode.log?.calls ?? []) {
      if (call.endedAtMs < since || call.endedAtMs > records.readAtMs) continue;
      const entry = byModel.get(call.model) ?? {
        model: call.model,
        calls: 0,
        failedCalls: 0,
        outputTokens: 0,
        callsPerSecond: 0,
        outputTokensPerSecond: 0,
      };
      entry.calls++;
      if (!call.ok) entry.failedCalls++;
      entry.outputTokens += call.completionTokens;
      byModel.set(call.model, entry);
    }
  }
  // A run younger than the window is measured over its own time, so its first minutes read at their real rate.
  const firstStepMs = Math.min(...records.steps.map((step) => Date.parse(step.startedAt)));
  const seconds = Math.max(1, Math.min(windowMs, records.readAtMs - firstStepMs) / 1000);
  return [...byModel.values()]
    .map((entry) => ({
      ...entry,
      callsPerSecond: round(entry.calls / seconds),
      outputTokensPerSecond: round(entry.outputTokens / seconds),
    }))
    .sort((a, b) => a.model.localeCompare(b.model));
}

/** Outages, failed steps and episodes, and steps a stopped process left half done, each with its reason. */
export function problems(records: RunRecords): Problem[] {
  const found: Problem[] = records.outages.map((outage) => ({
    kind: 'outage',
    at: outage.at,
    what: outage.what,
    reason: outage.outageSince
      ? `${outage.error} (server failing since ${outage.outageSince})`
      : outage.error,
  }));
  for (const step of records.steps) {
    if (step.status === 'failed') {
      found.push({
        kind: 'failed-step',
        at: step.finishedAt,
        what: step.key,
        reason: step.error ?? 'no message',
      });
    } else if (step.status === 'started' && !records.holder.alive) {
      found.push({
        kind: 'interrupted-step',
        at: step.startedAt,
        what: step.key,
        reason: 'its process stopped before it finished; the same command redoes it',
      });
    }
  }
  for (const episode of records.episodes) {
    if (episode.finished && episode.status !== 'success') {
      found.push({
        kind: 'failed-episode',
        at: null,
        what: episode.dir,
        reason: episode.failure ?? 'failed',
      });
    }
  }
  return found;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
