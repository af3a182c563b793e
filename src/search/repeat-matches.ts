import { relative } from 'node:path';

import type { WorkspaceBundle } from '../judge/bundle.js';
import { PairwiseJudgmentRecord, type PairwiseJudgment } from '../records/judgment-record.js';
import { judgePair } from '../judge/pairwise-judge.js';
import { searchRepeatsPath } from '../store/run-paths.js';
import { decideChampion, type ChampionState, type MatchResult } from './champion.js';
import { callThroughOutages } from './outage-gate.js';
import { rationaleOf } from './search-decision.js';
import type { ChampionMatch, SearchEpisode } from '../records/search-records.js';
import type { TaskSearchState } from './task-search-state.js';

/** One run of a design, as the search's own (run 0) or a rerun: its label (`v3`, `v3-r1`) and its episode. */
export interface JudgedRun {
  label: string;
  episode: SearchEpisode;
}

export interface RuleOutcome {
  matches: ChampionMatch[];
  promoted: boolean;
}

/**
 * Plays the search's champion rule on runs rather than versions: `state` names the runs standing as reference and
 * champion, `candidate` the run challenging them. Each match is judged by the search's judge, in its judge mode and
 * with its repair attempts, and lands in `repeats/judgments/<first>-vs-<second>.json`; a candidate whose run failed
 * loses by walkover, as in the search.
 */
export async function playRuleOnRuns(
  search: TaskSearchState,
  bundle: (run: JudgedRun) => Promise<WorkspaceBundle>,
  runs: readonly JudgedRun[],
  state: ChampionState,
  candidate: JudgedRun,
): Promise<RuleOutcome> {
  const { context, id } = search;
  const { run, settings, generation } = context;
  const byLabel = new Map(runs.map((entry) => [entry.label, entry]));
  const judged = new Map<string, { judgment: PairwiseJudgment; path: string }>();
  const compare = async (first: string, second: string): Promise<MatchResult> => {
    const judgment = await judgeRuns(search, bundle, byLabel.get(first)!, byLabel.get(second)!);
    const path = run.path(searchRepeatsPath(generation, id, `${first}-vs-${second}.json`));
    await PairwiseJudgmentRecord.write(path, judgment);
    judged.set(`${first}\n${second}`, { judgment, path });
    if (judgment.status === 'failed') return 'failed';
    return judgment.winner === 'x' ? 'first' : judgment.winner === 'y' ? 'second' : 'tie';
  };
  const decision = await decideChampion(
    settings.championRule,
    state,
    { id: candidate.label, failed: candidate.episode.status !== 'success' },
    compare,
  );
  const matches = decision.matches.map((match): ChampionMatch => {
    const record = judged.get(`${match.first}\n${match.second}`);
    return {
      ...match,
      rationale: record
        ? rationaleOf(record.judgment)
        : match.result === 'walkover'
          ? `the candidate's run failed (${candidate.episode.reason ?? 'unknown reason'}), so it lost without a judgment`
          : null,
      judgment: record ? relative(run.directory, record.path) : null,
    };
  });
  return { matches, promoted: decision.promoted };
}

/** One judgment of two runs, waiting out outages, within the search's judge slots. */
async function judgeRuns(
  search: TaskSearchState,
  bundle: (run: JudgedRun) => Promise<WorkspaceBundle>,
  x: JudgedRun,
  y: JudgedRun,
): Promise<PairwiseJudgment> {
  const { context, id, base } = search;
  const { judge, settings } = context;
  const [xBundle, yBundle] = await Promise.all([bundle(x), bundle(y)]);
  const what = `judge ${x.label} vs ${y.label}`;
  return callThroughOutages(
    context.outages,
    `${what} (${base}/repeats)`,
    async () => {
      const release = await context.judgeSlots.acquire();
      try {
        context.spending.beforeWork('judge');
        return await judgePair({
          task: search.task,
          x: { label: x.label, bundle: xBundle },
          y: { label: y.label, bundle: yBundle },
          model: judge.model,
          modelName: judge.modelName,
          mode: settings.judgeMode,
          seed: settings.seed,
          // Run labels keep these orders apart from the search's own (`<base>/<first>/<second>`).
          orderKey: `${base}/repeats/${x.label}/${y.label}`,
          sampling: judge.sampling,
          maxRepairAttempts: settings.judgeRepairAttempts,
        });
      } finally {
        release();
      }
    },
    (error) => context.onProgress?.({ kind: 'lost-to-outage', task: id, version: x.label, what, error }),
  );
}
