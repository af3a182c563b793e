// Hand-made search records (`search/<generation>/<task>/result.json`) for the search coverage tests: only what a
// champion history needs, validated by the record's own schema so a test can never rest on a malformed record.
import { TaskSearchRecord, type TaskSearchResult } from '../../src/records/search-records.js';

const execution = {
  status: 'success' as const,
  failure: null,
  delegations: 1,
  subagentThreads: 1,
  modelCalls: 3,
  failedModelCalls: 0,
  tokens: { prompt: 100, completion: 50, reasoning: 0, orchestratorCompletion: 20, subagentCompletion: 30 },
  durationMs: 1000,
  limitExceeded: null,
  tamperedPaths: [],
};

function episode(generation: string, task: string, version: string, failed: boolean) {
  const episodeId = `${generation}-${task}-${version}`;
  return {
    episodeId,
    dir: `episodes/${episodeId}`,
    status: failed ? ('failure' as const) : ('success' as const),
    reason: failed ? 'api_error: the model server failed' : null,
    execution: failed ? { ...execution, status: 'failure' as const } : execution,
  };
}

/**
 * A task's search whose champion after iteration i is `champions[i]` (v0 is iteration 0). `failed` names versions
 * whose episode failed; `noProposal` those whose proposal failed (no episode).
 */
export function searchRecord(
  generation: string,
  task: string,
  champions: readonly string[],
  options: { failed?: readonly string[]; noProposal?: readonly string[] } = {},
): TaskSearchResult {
  const champion = champions.at(-1) ?? 'reference';
  return TaskSearchRecord.schema.parse({
    generation,
    task,
    championRule: 'paper',
    judgeMode: 'random',
    reference: episode(generation, task, 'reference', false),
    champion,
    championDesign: null,
    championEpisode: champion === 'reference' ? null : `${generation}-${task}-${champion}`,
    beatsReference: champion !== 'reference',
    championHistory: champions.map((value, index) => ({ version: `v${index}`, champion: value })),
    iterations: champions.map((_, index) => {
      const version = `v${index}`;
      const proposed = !options.noProposal?.includes(version);
      return {
        version,
        proposal: proposed ? null : { ok: false, reason: 'invalid', errors: [], basedOn: 'v0' },
        episode: proposed
          ? episode(generation, task, version, options.failed?.includes(version) ?? false)
          : null,
        decision: null,
        maxChangeFraction: null,
      };
    }),
    counts: {
      episodes: champions.length + 1,
      failedEpisodes: 0,
      judgments: 0,
      failedJudgments: 0,
      failedProposals: 0,
    },
  });
}
