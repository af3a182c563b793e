import { z } from 'zod';

/**
 * Durations that end up in a Node timer: `setTimeout`, `setInterval`, `AbortSignal.timeout`, a child process's
 * `timeout`. Node keeps a timer's delay as a signed 32-bit number of milliseconds and sets anything past 2³¹−1 ms
 * (about 24.8 days) to 1 ms with only a warning, so a task's `timeout_sec = 3000000`, meant as "never", killed its
 * verifier at once. Every duration a task, the run configuration or a flag gives is checked here: refused, naming the
 * field, when it is not a finite number, negative (or zero where zero means nothing), or past that range; and
 * converted to whole milliseconds. Computed delays (a deadline minus now, a timeout plus a grace) go through
 * `timerDelay` where they are scheduled.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** The longest duration in whole seconds whose milliseconds a timer holds: 2,147,483 s. */
export const MAX_TIMER_SECONDS = Math.floor(MAX_TIMER_MS / 1000);
/** The same in days, rounded down: 24.8. */
export const MAX_TIMER_DAYS = Math.floor(MAX_TIMER_MS / 8_640_000) / 10;

export type DurationUnit = 's' | 'ms';

/** What a duration field accepts. */
export interface DurationRule {
  unit: DurationUnit;
  /** Whether 0 is accepted (for fields where 0 means "no wait"); default: only positive durations. */
  zero?: boolean;
  /** The field's own upper bound in its unit, when stricter than the timer's. */
  max?: number;
}

const UNIT_NAME: Record<DurationUnit, string> = { s: 'seconds', ms: 'milliseconds' };
const MAX_IN: Record<DurationUnit, number> = { s: MAX_TIMER_SECONDS, ms: MAX_TIMER_MS };

function limitOf(rule: DurationRule): number {
  return Math.min(rule.max ?? Infinity, MAX_IN[rule.unit]);
}

function notFinite(value: unknown, rule: DurationRule): string {
  return `must be a finite number of ${UNIT_NAME[rule.unit]} (found ${String(value)})`;
}

function tooShort(value: unknown, rule: DurationRule): string {
  const floor = rule.zero ? 'at least 0' : 'more than 0';
  return `must be ${floor} ${rule.unit} (found ${String(value)})`;
}

function tooLong(value: unknown, rule: DurationRule): string {
  const limit = limitOf(rule);
  const found = `(found ${String(value)})`;
  if (limit < MAX_IN[rule.unit]) return `must be at most ${limit} ${rule.unit} ${found}`;
  return `must be at most ${limit} ${rule.unit} (${MAX_TIMER_DAYS} days), Node's timer limit ${found}`;
}

/** What is wrong with a duration, or null when it is one a timer can hold. */
export function durationProblem(value: number, rule: DurationRule): string | null {
  if (!Number.isFinite(value)) return notFinite(value, rule);
  if (value < 0 || (value === 0 && !rule.zero)) return tooShort(value, rule);
  if (value > limitOf(rule)) return tooLong(value, rule);
  return null;
}

/**
 * A zod number for a duration field of a file (the run configuration, a task manifest, a task.toml, a queued job):
 * the file's reader names the field by its path, and the message says the limit and the value found.
 */
export function durationSchema(rule: DurationRule): z.ZodNumber {
  const number = z.number({
    error: (issue) => (typeof issue.input === 'number' ? notFinite(issue.input, rule) : undefined),
  });
  const floored = rule.zero
    ? number.min(0, { error: (issue) => tooShort(issue.input, rule) })
    : number.positive({ error: (issue) => tooShort(issue.input, rule) });
  return floored.max(limitOf(rule), { error: (issue) => tooLong(issue.input, rule) });
}

/** A duration in whole milliseconds, at least 1 when the duration is positive (a timer of 0 is "no timeout" to some). */
export function durationMs(value: number, unit: DurationUnit): number {
  const milliseconds = Math.round(unit === 's' ? value * 1000 : value);
  return value > 0 ? Math.max(1, milliseconds) : milliseconds;
}

/**
 * The delay to schedule a timer with, from a computed value: a deadline minus now, a timeout times a factor, a
 * server's Retry-After. Clamped, never refused: each field it derives from has passed `durationSchema`, so a value
 * past the range comes from arithmetic on valid fields (a sum or a product), and a timer of 24.8 days is as good as
 * "never" for any run, while throwing at the point of scheduling would kill work that is otherwise fine. It is never
 * below 1 ms, since a child process takes 0 as "no timeout", and always whole, as a child process requires. NaN is
 * a bug upstream, thrown rather than guessed at: Node would fire it at once.
 */
export function timerDelay(milliseconds: number): number {
  if (Number.isNaN(milliseconds))
    throw new TypeError('a timer delay is NaN: a duration was computed from nothing');
  return Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(milliseconds)));
}
