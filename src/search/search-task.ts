import { changeBound } from '../optimizer/propose-workflow.js';
import { recordWorkPlan } from '../store/work-plan.js';
import { loadTask } from '../tasks/load-task.js';
import { initialChampionState, type ChampionState } from './champion.js';
import type { SearchContext } from './search-context.js';
import { decideVersion } from './search-decision.js';
import { searchEpisode } from './search-episode.js';
import { proposeVersion } from './search-proposal.js';
import { SearchRepeats } from './search-repeats.js';
import {
  TaskSearchRecord,
  type SearchEpisode,
  type SearchIteration,
  type SearchProposal,
  type TaskSearchResult,
} from '../records/search-records.js';
import { maxChangeFraction } from './stabiliser.js';
import { TaskSearchState } from './task-search-state.js';
import { REFERENCE } from '../records/search-records.js';

/**
 * The inner loop for one task (MASS.md §3): a bare-task reference run and v0 (the task's own design), then
 * `iterations` rounds of optimizer → episode → judge, the champion kept by the configured rule. Every episode,
 * proposal and judgment is a step of the run store, so a search killed at any moment resumes where it stopped and
 * never redoes a finished step. Everything lands under `search/<generation>/<task>/`, and the result also in
 * `result.json` there. With `repeats`, the search's noise is measured beside it (`SearchRepeats`), told each decision
 * once it is made and waited for at the end; the task is finished when both are.
 */
export async function searchTask(context: SearchContext, taskDir: string): Promise<TaskSearchResult> {
  const search = new TaskSearchState(context, await loadTask(taskDir));
  const repeats = SearchRepeats.for(search);
  let result: TaskSearchResult;
  try {
    result = await searchVersions(search, repeats);
    await repeats?.finish();
  } catch (error) {
    await repeats?.stop();
    throw error;
  }
  context.onProgress?.({
    kind: 'task-finished',
    task: search.id,
    champion: result.champion,
    beatsReference: result.beatsReference,
  });
  return result;
}

/** The reference, v0 and the iterations, each decision handed to `repeats` (when measured) after it is made. */
async function searchVersions(
  search: TaskSearchState,
  repeats: SearchRepeats | null,
): Promise<TaskSearchResult> {
  const { context } = search;
  const { settings } = context;
  const v0 = search.task.manifest.workflow;
  const planned = settings.iterations;
  await recordWorkPlan(context.run.directory, search.base, {
    episode: planned + 2,
    proposal: planned,
    judge: planned + 1,
    result: 1,
  });
  await search.writeDesign('v0', v0);
  const [reference, v0Episode] = await Promise.all([
    searchEpisode(search, REFERENCE, null),
    searchEpisode(search, 'v0', v0),
  ]);
  search.versions.set(REFERENCE, { label: REFERENCE, design: null, episode: reference });
  search.versions.set('v0', { label: 'v0', design: v0, episode: v0Episode });

  let state = initialChampionState(REFERENCE);
  const iterations: SearchIteration[] = [];
  const championHistory: TaskSearchResult['championHistory'] = [];
  let current = 'v0';
  for (let index = 0; index <= settings.iterations; index++) {
    const version = `v${index}`;
    // No bound on the proposal that gives a free-text or draft v0 its structure (see `changeBound`).
    const bound =
      index === 0
        ? undefined
        : changeBound(search.version(current).design!, maxChangeFraction(settings.stabiliser, index));
    let proposal: SearchProposal | null = null;
    if (index > 0) {
      proposal = await proposeVersion(search, version, current, state.championId, bound);
      if (!proposal.ok) {
        iterations.push({
          version,
          proposal,
          episode: null,
          decision: null,
          maxChangeFraction: bound ?? null,
        });
        championHistory.push({ version, champion: state.championId });
        continue;
      }
      const episode = await searchEpisode(search, version, proposal.design);
      search.versions.set(version, { label: version, design: proposal.design, episode });
    }
    const episode = search.version(version).episode!;
    const decision = await decideVersion(search, version, state);
    repeats?.decided(decision);
    state = { referenceId: REFERENCE, championId: decision.championAfter };
    search.history.push(...decision.comparisons);
    if (decision.promoted) {
      const rationale = decision.matches.at(-1)?.rationale;
      if (rationale) search.promotionRationale.set(version, rationale);
      context.onProgress?.({ kind: 'champion', task: search.id, version, champion: version });
    }
    iterations.push({ version, proposal, episode, decision, maxChangeFraction: bound ?? null });
    championHistory.push({ version, champion: state.championId });
    current = version;
  }

  const resultFile = `${search.base}/result.json`;
  return context.run.step(
    `${search.base}/result`,
    async () => {
      const summary = taskSearchResult(search, reference, state, iterations, championHistory);
      await TaskSearchRecord.write(context.run.path(resultFile), summary);
      return summary;
    },
    { output: TaskSearchRecord.schema, produces: [resultFile] },
  );
}

/** `result.json`: the champion, its history, every iteration and the counts of what ran and failed. */
function taskSearchResult(
  search: TaskSearchState,
  reference: SearchEpisode,
  state: ChampionState,
  iterations: SearchIteration[],
  championHistory: TaskSearchResult['championHistory'],
): TaskSearchResult {
  const { generation, settings } = search.context;
  const champion = search.version(state.championId);
  const judgments = iterations.flatMap((iteration) =>
    (iteration.decision?.matches ?? []).filter((match) => match.judgment !== null),
  );
  const episodes = [
    reference,
    ...iterations.flatMap((iteration) => (iteration.episode ? [iteration.episode] : [])),
  ];
  return {
    generation,
    task: search.id,
    championRule: settings.championRule,
    judgeMode: settings.judgeMode,
    reference,
    champion: state.championId,
    championDesign: champion.design,
    championEpisode: champion.episode?.episodeId ?? null,
    beatsReference: state.championId !== REFERENCE,
    championHistory,
    iterations,
    counts: {
      episodes: episodes.length,
      failedEpisodes: episodes.filter((episode) => episode.status !== 'success').length,
      judgments: judgments.length,
      failedJudgments: judgments.filter((match) => match.result === 'failed').length,
      failedProposals: iterations.filter((iteration) => iteration.proposal?.ok === false).length,
    },
  };
}
