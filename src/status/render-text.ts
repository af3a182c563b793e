import { textTable } from '../text-table.js';
import { formatCounts, formatDuration, formatModelCall, formatTokens } from './format.js';
import type { RunStatus } from './run-status.js';
import { spendingLines } from './spending.js';
import { stageName } from './summarise.js';

/** At most this many rows of a list in the text; the JSON has them all. */
const LIST_LIMIT = 12;

/** `mass status` as text for a terminal. */
export function renderStatusText(status: RunStatus): string {
  const lines: string[] = [];
  const { run } = status;
  const held = run.holder
    ? ` (${run.holder.command ?? 'mass'}, pid ${run.holder.pid} on ${run.holder.hostname}, since ${run.holder.since})`
    : '';
  lines.push(`run ${run.name}: ${run.state}${held}`, `read at ${status.readAt}`);
  if (status.generations.length > 0) {
    lines.push('', 'generations');
    for (const generation of status.generations) {
      lines.push(`  ${generation.generation}: ${generation.stage} (${generation.state})`);
    }
  }
  lines.push('', 'stages');
  if (status.stages.length === 0) lines.push('  no step has started');
  for (const stage of status.stages) {
    const eta =
      stage.state === 'done'
        ? ''
        : stage.eta.remainingMs === null
          ? ' · ETA unknown'
          : ` · ETA ${formatDuration(stage.eta.remainingMs)}`;
    lines.push(`  ${stageName(stage)}: ${stage.state}${eta}`);
    for (const group of stage.groups) {
      lines.push(
        `    ${(group.label ?? stage.stage).padEnd(18)} ${group.state.padEnd(8)} ${formatCounts(group)}`,
      );
    }
  }
  lines.push(
    ...inFlightLines(status),
    ...throughputLines(status),
    ...problemLines(status),
    ...spendingLines(status.spending),
  );
  const eta = status.eta;
  if (status.run.state !== 'finished') {
    lines.push(
      '',
      `ETA for the run: ${eta.remainingMs === null ? 'unknown' : formatDuration(eta.remainingMs)}` +
        (eta.finishesAt ? ` (about ${eta.finishesAt})` : ''),
      `  ${eta.basis}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function inFlightLines(status: RunStatus): string[] {
  const { episodes, calls, queueJobsOnWorkers } = status.inFlight;
  const modelCalls = calls.reduce((total, call) => total + call.modelCalls.length, 0);
  const lines = [
    '',
    `in flight: ${episodes.length} episodes, ${calls.length} judge or optimizer steps (${modelCalls} model calls waiting)`,
  ];
  if (queueJobsOnWorkers > 0)
    lines.push(`  ${queueJobsOnWorkers} queue jobs started on workers and not finished`);
  if (episodes.length > 0) {
    const rows = episodes
      .slice(0, LIST_LIMIT)
      .map((episode) => [
        episode.id,
        episode.where === 'worker' ? `${episode.state} (worker)` : episode.state,
        formatDuration(episode.ageMs),
        `${episode.calls}`,
        episode.currentCall
          ? `#${episode.currentCall.seq}, ${formatDuration(episode.currentCall.ageMs)}`
          : '-',
        `${formatTokens(episode.promptTokens)} in / ${formatTokens(episode.completionTokens)} out`,
      ]);
    lines.push(
      ...textTable(['episode', 'state', 'age', 'calls', 'current call', 'tokens so far'], rows).map(
        (line) => `  ${line}`,
      ),
    );
    if (episodes.length > LIST_LIMIT)
      lines.push(`  … and ${episodes.length - LIST_LIMIT} more (--json lists all)`);
  }
  for (const call of calls.slice(0, LIST_LIMIT)) {
    lines.push(
      `  ${call.kind} ${call.key}: ${call.state}, ${formatDuration(call.ageMs)}, attempt ${call.attempts}`,
      ...call.modelCalls.map((modelCall) => `    model call ${formatModelCall(modelCall)}`),
    );
  }
  return lines;
}

function throughputLines(status: RunStatus): string[] {
  const { windowMs, endpoints } = status.throughput;
  const minutes = Math.round(windowMs / 60_000);
  if (endpoints.length === 0) return ['', `throughput: no model call in the last ${minutes} minutes`];
  const rows = endpoints.map((endpoint) => [
    endpoint.model,
    `${endpoint.calls}`,
    `${endpoint.failedCalls}`,
    endpoint.callsPerSecond.toFixed(2),
    endpoint.outputTokensPerSecond.toFixed(1),
  ]);
  return [
    '',
    `throughput over the last ${minutes} minutes (episodes' model calls)`,
    ...textTable(['model', 'calls', 'failed', 'calls/s', 'output tok/s'], rows).map((line) => `  ${line}`),
  ];
}

function problemLines(status: RunStatus): string[] {
  const { problems } = status;
  if (problems.length === 0) return ['', 'problems: none'];
  const lines = ['', `problems: ${problems.length}`];
  for (const problem of problems.slice(-LIST_LIMIT)) {
    lines.push(
      `  ${problem.kind} ${problem.what}${problem.at ? ` at ${problem.at}` : ''}: ${problem.reason}`,
    );
  }
  if (problems.length > LIST_LIMIT)
    lines.push(`  … ${problems.length - LIST_LIMIT} earlier (--json lists all)`);
  return lines;
}
