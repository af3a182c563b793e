import { describe, expect, it } from 'vitest';

import {
  MAX_TIMER_MS,
  MAX_TIMER_SECONDS,
  durationMs,
  durationSchema,
  timerDelay,
} from '../src/timer-duration.js';

function messages(result: { success: boolean; error?: { issues: Array<{ message: string }> } }): string[] {
  return result.error?.issues.map((issue) => issue.message) ?? [];
}

describe('durations a timer can hold', () => {
  it("puts the limit at Node's: 2^31 − 1 ms, 2,147,483 whole seconds", () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(MAX_TIMER_SECONDS).toBe(2_147_483);
  });

  it('accepts seconds up to the limit and refuses more, NaN, infinities, zero and negatives, saying why', () => {
    const seconds = durationSchema({ unit: 's' });
    expect(seconds.parse(MAX_TIMER_SECONDS)).toBe(MAX_TIMER_SECONDS);
    expect(seconds.parse(0.5)).toBe(0.5);
    expect(messages(seconds.safeParse(3_000_000))).toEqual([
      "must be at most 2147483 s (24.8 days), Node's timer limit (found 3000000)",
    ]);
    expect(messages(seconds.safeParse(MAX_TIMER_SECONDS + 1))[0]).toContain('at most 2147483 s');
    expect(messages(seconds.safeParse(Number.NaN))).toEqual([
      'must be a finite number of seconds (found NaN)',
    ]);
    expect(messages(seconds.safeParse(Infinity))).toEqual([
      'must be a finite number of seconds (found Infinity)',
    ]);
    expect(messages(seconds.safeParse(0))).toEqual(['must be more than 0 s (found 0)']);
    expect(messages(seconds.safeParse(-5))).toEqual(['must be more than 0 s (found -5)']);
  });

  it('takes 0 where the field allows it, milliseconds up to 2^31 − 1, and a stricter bound of its own', () => {
    expect(durationSchema({ unit: 'ms', zero: true }).parse(0)).toBe(0);
    expect(messages(durationSchema({ unit: 'ms', zero: true }).safeParse(-1))).toEqual([
      'must be at least 0 ms (found -1)',
    ]);
    expect(durationSchema({ unit: 'ms' }).parse(MAX_TIMER_MS)).toBe(MAX_TIMER_MS);
    expect(messages(durationSchema({ unit: 'ms' }).safeParse(MAX_TIMER_MS + 1))[0]).toContain(
      "at most 2147483647 ms (24.8 days), Node's timer limit",
    );
    expect(messages(durationSchema({ unit: 's', max: 600 }).safeParse(601))).toEqual([
      'must be at most 600 s (found 601)',
    ]);
  });

  it('converts to whole milliseconds, never rounding a positive duration down to "no timeout"', () => {
    expect(durationMs(1.5, 's')).toBe(1500);
    expect(durationMs(0.0001, 's')).toBe(1);
    expect(durationMs(2.4, 'ms')).toBe(2);
    expect(durationMs(MAX_TIMER_SECONDS, 's')).toBeLessThanOrEqual(MAX_TIMER_MS);
  });

  it('clamps a computed delay into the range: a huge one never becomes a delay that fires at once', () => {
    for (const huge of [MAX_TIMER_MS + 1, 3_000_000_000, 1e300, Number.MAX_VALUE, Infinity]) {
      expect(timerDelay(huge)).toBe(MAX_TIMER_MS);
    }
    expect(timerDelay(2.2)).toBe(3);
    expect(timerDelay(0)).toBe(1);
    expect(timerDelay(-10_000)).toBe(1);
    expect(timerDelay(-Infinity)).toBe(1);
    expect(() => timerDelay(Number.NaN)).toThrow('NaN');
  });

  it('schedules a clamped timer that Node keeps pending rather than firing', async () => {
    let fired = false;
    const timer = setTimeout(() => (fired = true), timerDelay(3_000_000_000));
    await new Promise((resolve) => setTimeout(resolve, 30));
    clearTimeout(timer);
    expect(fired).toBe(false);
  });
});
