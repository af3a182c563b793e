import { join } from 'node:path';

import { fitBradleyTerry } from '../../ranking/bradley-terry.js';
import { tallyRecords } from '../../ranking/matches.js';
import { writeFileAtomic } from '../../store/atomic-write.js';
import { outerLoopFiles } from '../../store/run-paths.js';
import { selectEpisodes } from '../selection.js';
import { Selection } from '../../records/selection.js';
import type { GenerationContext, GenerationTask } from './generation-context.js';
import {
  TaskRankingRecord,
  type CollectionRecord,
  type MatchOutcome,
} from '../../records/generation-records.js';
import { decidedMatches } from './tournament.js';

/**
 * Bradley–Terry over the decided matches (failed judgments carry no preference and are left out), written as
 * `ranking.json`, with the matches it used in `matches.jsonl` (the format of `mass rank`).
 */
export async function fitStep(
  context: GenerationContext,
  task: GenerationTask,
  entrants: { players: string[]; excluded: TaskRankingRecord['excluded'] },
  outcomes: readonly MatchOutcome[],
): Promise<TaskRankingRecord> {
  const { run, settings } = context;
  const rankingFile = join(task.base, outerLoopFiles.ranking);
  const matchesFile = join(task.base, outerLoopFiles.matches);
  return run.step(
    `${task.base}/fit`,
    async () => {
      const matches = decidedMatches(outcomes);
      const fit =
        entrants.players.length === 0
          ? null
          : fitBradleyTerry(matches, { players: entrants.players, prior: settings.prior });
      const records = Object.fromEntries(tallyRecords(matches));
      const ranking: TaskRankingRecord = {
        generation: context.generation,
        task: task.id,
        players: entrants.players,
        excluded: entrants.excluded,
        matches: {
          scheduled: outcomes.length,
          decided: matches.length,
          failed: outcomes.filter((outcome) => outcome.status === 'failed').map((outcome) => outcome.index),
        },
        fit: fit && {
          scores: fit.scores,
          stderr: fit.stderr,
          iterations: fit.iterations,
          converged: fit.converged,
          prior: fit.prior,
          mode: fit.mode,
          stderrMethod: fit.stderrMethod,
        },
        records: Object.fromEntries(
          entrants.players.map((id) => [id, records[id] ?? { wins: 0, ties: 0, losses: 0 }]),
        ),
        ranking: fit?.ranking ?? [],
      };
      await writeFileAtomic(
        run.path(matchesFile),
        matches.map((match) => `${JSON.stringify(match)}\n`).join(''),
      );
      await TaskRankingRecord.write(run.path(rankingFile), ranking);
      return ranking;
    },
    { output: TaskRankingRecord.schema, produces: [rankingFile, matchesFile] },
  );
}

/** Ranks 1..train for training, the next for validation, among the eligible runs; written as `selection.json`. */
export async function selectStep(
  context: GenerationContext,
  task: GenerationTask,
  collection: CollectionRecord,
  ranking: TaskRankingRecord,
): Promise<Selection> {
  const { run, settings } = context;
  const file = join(task.base, outerLoopFiles.selection);
  return run.step(
    `${task.base}/select`,
    async () => {
      // The excluded runs follow the ranked ones, so each is recorded with its reason rather than as unranked.
      const order = [...ranking.ranking, ...ranking.excluded.map((entry) => entry.episodeId)];
      const candidates = collection.episodes.map((episode) => ({
        episodeId: episode.episodeId,
        status: episode.status === 'success' ? ('success' as const) : ('failure' as const),
        tampered: episode.tampered,
      }));
      const selection = selectEpisodes(order, candidates, settings.selection);
      await writeFileAtomic(run.path(file), `${JSON.stringify(selection, null, 2)}\n`);
      return selection;
    },
    { output: Selection, produces: [file] },
  );
}
