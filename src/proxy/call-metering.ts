import { isRecord } from '../model/stream-accumulator.js';
import { tokenUsageFromWire, WireUsage } from '../model/types.js';
import type { Exchange } from './exchange.js';
import type { RecordedResponse } from './log-row.js';
import type { TokenMeter } from './token-meter.js';

/** Counts a call against the meter (and so the budget) by the usage its answer reports, whatever its shape. */
export function meterCall(meter: TokenMeter, model: string | null, exchange: Exchange): void {
  const completion = exchange.response?.kind === 'completion' ? exchange.response.completion : null;
  const failed = exchange.error !== null || exchange.status === null || exchange.status >= 400;
  meter.record(
    model ?? completion?.model ?? 'unknown',
    tokenUsageFromWire(reportedUsage(exchange.response)),
    failed,
  );
}

/**
 * The usage an answer reports: a completion's, or the `usage` of any other JSON answer, when it is well formed; with
 * the provider's `cost` and cached prompt tokens when it gives them (`tokenUsageFromWire`).
 */
export function reportedUsage(response: RecordedResponse | null): WireUsage | null {
  const usage =
    response?.kind === 'completion'
      ? response.completion.usage
      : response?.kind === 'json' && isRecord(response.body)
        ? response.body.usage
        : null;
  if (usage === null || usage === undefined) return null;
  const parsed = WireUsage.safeParse(usage);
  return parsed.success ? parsed.data : null;
}
