import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { faultTolerance } from '../../src/config/fault-tolerance.js';
import { upstreamRetryPolicy } from '../../src/episode/episode-settings.js';
import { loadRunConfig, parseRunConfig } from '../../src/config/run-config.js';
import { temporaryDirectory } from '../support/fixtures.js';

const minimal = {
  name: 'try-1',
  suite: 'suites/research-12',
  roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
};

const refusal = (data: object) => () => parseRunConfig({ ...minimal, ...data }, 'config.yaml');

// Every duration of the configuration ends in a Node timer, which fires at once past 2^31 − 1 ms (about 24.8 days).
describe("the run configuration's durations", () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());

  it('refuses an episode timeout past the timer range, naming the field', () => {
    expect(refusal({ budgets: { episodeTimeoutSeconds: 3_000_000 } })).toThrow(
      "config.yaml: budgets.episodeTimeoutSeconds: must be at most 2147483 s (24.8 days), Node's timer limit (found 3000000)",
    );
    expect(
      parseRunConfig({ ...minimal, budgets: { episodeTimeoutSeconds: 2_147_483 } }, 'c').budgets,
    ).toMatchObject({ episodeTimeoutSeconds: 2_147_483 });
  });

  it('refuses out-of-range fault-tolerance durations in seconds and in milliseconds', () => {
    expect(refusal({ faultTolerance: { outageSeconds: 1e7 } })).toThrow(
      'faultTolerance.outageSeconds: must be at most 2147483 s',
    );
    expect(refusal({ faultTolerance: { probeSeconds: 0 } })).toThrow(
      'faultTolerance.probeSeconds: must be more than 0 s (found 0)',
    );
    expect(refusal({ faultTolerance: { maxDelayMs: 2 ** 31 } })).toThrow(
      'faultTolerance.maxDelayMs: must be at most 2147483647 ms',
    );
    expect(refusal({ faultTolerance: { responseHeadTimeoutSeconds: 2_500_000 } })).toThrow(
      'faultTolerance.responseHeadTimeoutSeconds',
    );
    expect(refusal({ faultTolerance: { callSeconds: 2_500_000 } })).toThrow('faultTolerance.callSeconds');
  });

  it('refuses the toy server’s hang and a restart deployment’s wait past the range', () => {
    expect(refusal({ model: { kind: 'toy', faults: { rate: 0.1, hangSeconds: 3_000_000 } } })).toThrow(
      'model.faults.hangSeconds: must be at most 2147483 s',
    );
    expect(
      refusal({ rsi: { deploy: { kind: 'restart', argv: ['restart.sh'], timeoutSeconds: 3_000_000 } } }),
    ).toThrow('rsi.deploy.timeoutSeconds: must be at most 2147483 s');
  });

  it('refuses YAML infinities, naming the file and the field', async () => {
    const file = join(directory.path, 'config.yaml');
    writeFileSync(
      file,
      'name: try-1\nsuite: suites/research-12\nroles:\n  executor: { baseUrl: "http://127.0.0.1:8000/v1", model: m }\nbudgets:\n  episodeTimeoutSeconds: .inf\n',
    );
    await expect(loadRunConfig(file)).rejects.toThrow(
      `${file}: budgets.episodeTimeoutSeconds: must be a finite number of seconds (found Infinity)`,
    );
  });

  it('gives the proxy whole milliseconds within the range', () => {
    const policy = upstreamRetryPolicy(
      faultTolerance({
        faultTolerance: { ...faultTolerance({}), callSeconds: 2_147_483, responseHeadTimeoutSeconds: 0.0004 },
      }),
    );
    expect(policy.maxTotalMs).toBe(2_147_483_000);
    expect(policy.responseHeadTimeoutMs).toBe(1);
  });
});
