import type { GroupStatus, InFlightModelCall, KindCount } from './run-status.js';

/** A duration as `45s`, `12m 05s` or `3h 20m`. */
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/** `3/5 episode` (with `1 failed`, `1 running`), or `3 episode` when the stage records no plan. */
export function formatKind(count: KindCount): string {
  const done = count.planned === null ? `${count.done}` : `${count.done}/${count.planned}`;
  const extra = [
    ...(count.inFlight > 0 ? [`${count.inFlight} running`] : []),
    ...(count.failed > 0 ? [`${count.failed} failed`] : []),
  ];
  return `${done} ${count.kind}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
}

/** A group's counts on one line: `2/3 episode, 1/1 proposal, 1/2 judge · runs 3/4`. */
export function formatCounts(group: GroupStatus): string {
  const parts = group.kinds.map(formatKind);
  if (group.episodes) parts.push(`${group.episodes.done}/${group.episodes.planned} runs`);
  return parts.join(', ');
}

/** A count of tokens as `12.3k` or `1.2M`. */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return `${tokens}`;
  if (tokens < 1_000_000) return `${(tokens / 1000).toFixed(1)}k`;
  return `${(tokens / 1_000_000).toFixed(2)}M`;
}

/** A judge's or optimizer's call in flight: `#3 to gpt-5.5 (judge), 20s, prompt 123.4k chars, waiting for its answer`. */
export function formatModelCall(call: InFlightModelCall): string {
  return (
    `#${call.seq} to ${call.model} (${call.role}), ${formatDuration(call.ageMs)}, ` +
    `prompt ${formatTokens(call.promptChars)} chars, waiting for its answer`
  );
}
