import { UserError } from '../errors.js';
import { durationProblem } from '../timer-duration.js';

const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/**
 * `90`, `90s`, `30m`, `1.5h`, `500ms` as seconds: more than zero, and within what a Node timer holds (2,147,483 s,
 * about 24.8 days; past it a timer fires at once).
 */
export function parseDurationSeconds(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UserError(`${flag} "${text}" is not a duration: use e.g. 90s, 30m or 2h`);
  const seconds = Number(match[1]) * UNITS[match[2] ?? 's']!;
  const problem = durationProblem(seconds, { unit: 's' });
  if (problem !== null) throw new UserError(`${flag} ${text}: ${problem}`);
  return seconds;
}

export function parsePositiveInteger(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new UserError(`${flag} "${text}" is not a whole number`);
  return value;
}

/** Elapsed time as `m:ss`, for progress lines. */
export function formatClock(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}
