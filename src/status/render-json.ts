import type { RunStatus } from './run-status.js';

/** `mass status --json`: the whole status as one JSON document (one line each time with `--watch`). */
export function renderStatusJson(status: RunStatus, pretty = true): string {
  return `${JSON.stringify(status, null, pretty ? 2 : undefined)}\n`;
}
