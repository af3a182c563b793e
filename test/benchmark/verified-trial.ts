import type { VerifiedTrial } from '../../src/records/benchmark-records.js';

/** A team's finished trial of benchmark `b`, scored `reward` (null: no reward), with any field replaced. */
export function verifiedTrial(
  label: string,
  task: string,
  index: number,
  reward: number | null,
  overrides: Partial<Omit<VerifiedTrial, 'verification'>> = {},
): VerifiedTrial {
  return {
    schemaVersion: 1,
    kind: 'benchmark-trial',
    benchmark: 'b',
    task,
    agent: 'team',
    label,
    trial: index,
    samplingSeed: index,
    dir: `benchmarks/b/episodes/team-${label}-${task}-${index}`,
    status: 'finished',
    failure: null,
    outputTokens: 100,
    delegations: 0,
    wallSeconds: 1,
    ...overrides,
    verification: {
      status: reward === null ? 'no-reward' : 'scored',
      reward,
      rewards: null,
      rewardFile: reward === null ? null : 'reward.txt',
      detail: null,
      exitCode: 0,
      wallSeconds: 0.1,
      stdoutTail: '',
      stderrTail: '',
      leftOut: [],
    },
  };
}
