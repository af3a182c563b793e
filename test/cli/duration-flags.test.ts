import { describe, expect, it } from 'vitest';

import { parseDurationSeconds } from '../../src/cli/duration.js';
import { UserError } from '../../src/errors.js';

// `mass episode --timeout`, `--cpu-time`, `mass doctor --timeout` and `mass worker --lock-seconds` are read here.
describe('duration flags', () => {
  it('reads seconds, minutes and hours up to the timer limit', () => {
    expect(parseDurationSeconds('90', '--timeout')).toBe(90);
    expect(parseDurationSeconds('30m', '--timeout')).toBe(1800);
    expect(parseDurationSeconds('596h', '--timeout')).toBe(2_145_600);
    expect(parseDurationSeconds('2147483', '--timeout')).toBe(2_147_483);
  });

  it('refuses a duration past 2^31 − 1 ms, which a Node timer would fire at once, naming the flag', () => {
    expect(() => parseDurationSeconds('3000000', '--timeout')).toThrow(UserError);
    expect(() => parseDurationSeconds('3000000', '--timeout')).toThrow(
      "--timeout 3000000: must be at most 2147483 s (24.8 days), Node's timer limit (found 3000000)",
    );
    expect(() => parseDurationSeconds('1000h', '--lock-seconds')).toThrow(
      '--lock-seconds 1000h: must be at most',
    );
  });

  it('refuses zero and what is not a duration', () => {
    expect(() => parseDurationSeconds('0', '--timeout')).toThrow('--timeout 0: must be more than 0 s');
    expect(() => parseDurationSeconds('soon', '--timeout')).toThrow('is not a duration');
  });
});
