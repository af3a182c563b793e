import { describe, expect, it } from 'vitest';

import { benchmarkPath } from '../../src/records/benchmark-records.js';
import { TEAM_VS_SINGLE_FOLDER } from '../../src/students/team-versus-single.js';
import {
  benchmarkBase,
  benchmarkImageKey,
  benchmarkTrialKey,
  evaluationBase,
  evaluationEpisodeKey,
  gradeKey,
  judgmentKey,
  studentKey,
} from '../../src/work/step-keys.js';

// The keys of runs made before the work engine: a resumed run finds its finished steps by these exact strings.
describe('the step keys of the studies', () => {
  const base = evaluationBase('final');

  it('of an evaluation are the ones its runs have always recorded', () => {
    expect(base).toBe('evaluation/final');
    expect(
      evaluationEpisodeKey(base, { label: 'L1', task: 'demo-potency', condition: 'bare', replicate: 2 }),
    ).toBe('evaluation/final/episode/L1/demo-potency/bare/2');
    expect(gradeKey(base, 'L1-demo-potency-bare-2')).toBe('evaluation/final/grade/L1-demo-potency-bare-2');
    expect(
      judgmentKey(
        base,
        {
          kind: 'pair',
          candidate: 'L0-with-L1-designs',
          baseline: 'L0',
          task: 'demo-potency',
          condition: 'transfer',
          replicate: 0,
        },
        'judge-a',
        1,
      ),
    ).toBe('evaluation/final/judgment/L0-with-L1-designs-vs-L0/demo-potency/transfer/0/judge-a/1');
    expect(
      judgmentKey(
        base,
        { kind: 'tournament', generation: 'L1', task: 'demo-potency', match: 7 },
        'judge-a',
        0,
      ),
    ).toBe('evaluation/final/tournament/L1/demo-potency/7/judge-a/0');
    expect(
      judgmentKey(
        base,
        { kind: 'search-coverage', generation: 'L0', task: 'demo-volatility', version: 'v3' },
        'judge-b',
        42,
      ),
    ).toBe('evaluation/final/search-coverage/L0/demo-volatility/v3/judge-b/42');
  });

  it('of a students experiment are the ones its runs have always recorded', () => {
    expect(
      judgmentKey(
        base,
        { kind: 'team-vs-single', generation: 'L0', task: 'demo-potency', seed: 3 },
        'judge-a',
        0,
      ),
    ).toBe(`${TEAM_VS_SINGLE_FOLDER}/L0/demo-potency/3/judge-a/0`);
    expect(TEAM_VS_SINGLE_FOLDER).toBe('team-vs-single');
    expect(studentKey('M', 'dataset')).toBe('students/M/dataset');
    expect(studentKey('M', 'train')).toBe('students/M/train');
  });

  it('of a benchmark are the ones its runs have always recorded', () => {
    expect(benchmarkBase('terminal-bench')).toBe(benchmarkPath('terminal-bench'));
    const trial = { agent: 'team', label: 'L1', task: 'hello-world', trial: 1 };
    expect(benchmarkTrialKey('terminal-bench', 'trial', trial)).toBe(
      'benchmarks/terminal-bench/trial/team/L1/hello-world/1',
    );
    expect(benchmarkTrialKey('terminal-bench', 'verify', { ...trial, attempt: 2 })).toBe(
      'benchmarks/terminal-bench/verify/team/L1/hello-world/1/retry-2',
    );
    expect(benchmarkTrialKey('terminal-bench', 'trial', { ...trial, attempt: 0 })).toBe(
      'benchmarks/terminal-bench/trial/team/L1/hello-world/1',
    );
    expect(benchmarkImageKey('terminal-bench', 'hello-world')).toBe(
      'benchmarks/terminal-bench/image/hello-world',
    );
  });
});
