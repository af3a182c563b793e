import { mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

import { PairwiseJudgmentRecord, type PairwiseJudgment } from '../records/judgment-record.js';
import { judgePair } from '../judge/pairwise-judge.js';
import { verdictPoints } from '../optimizer/comparison-points.js';
import type { PairwiseComparison } from '../records/optimizer-history.js';
import { decideChampion, type ChampionState, type MatchResult } from './champion.js';
import { callThroughOutages } from './outage-gate.js';
import { SearchDecision, type ChampionMatch } from '../records/search-records.js';
import type { TaskSearchState } from './task-search-state.js';
import { searchVersionFiles } from '../store/run-paths.js';

interface Judged {
  first: string;
  second: string;
  judgment: PairwiseJudgment;
  path: string;
}

/**
 * The judge step of `version`: its matches against the champion (and the reference, by the champion rule), each
 * judgment in `<version>/judgments/<first>-vs-<second>.json`, the champion after them, and the comparisons the
 * optimizer reads next.
 */
export async function decideVersion(
  state: TaskSearchState,
  version: string,
  champion: ChampionState,
): Promise<SearchDecision> {
  const { context, id, base } = state;
  const { run, settings } = context;
  const candidate = state.version(version);
  return run.step(
    `${base}/${version}/judge`,
    async () => {
      const judged: Judged[] = [];
      const compare = async (first: string, second: string): Promise<MatchResult> => {
        const path = run.path(base, version, searchVersionFiles.judgments, `${first}-vs-${second}.json`);
        // A step stopped midway (a budget spent) keeps the judgments it made: they are not made again.
        let judgment = await PairwiseJudgmentRecord.readIfPresent(path);
        if (!judgment) {
          judgment = await judgeMatch(state, version, first, second);
          await mkdir(join(path, '..'), { recursive: true });
          await PairwiseJudgmentRecord.write(path, judgment);
        }
        judged.push({ first, second, judgment, path });
        context.onProgress?.({
          kind: 'judgment',
          task: id,
          version,
          result:
            judgment.winner === null
              ? 'failed'
              : judgment.winner === 'tie'
                ? 'tie'
                : `${judgment.winner === 'x' ? first : second} won`,
        });
        if (judgment.status === 'failed') return 'failed';
        return judgment.winner === 'x' ? 'first' : judgment.winner === 'y' ? 'second' : 'tie';
      };
      const decision = await decideChampion(
        settings.championRule,
        champion,
        { id: version, failed: candidate.episode?.status !== 'success' },
        compare,
      );
      const matches: ChampionMatch[] = decision.matches.map((match) => {
        const record = judged.find((entry) => entry.first === match.first && entry.second === match.second);
        return {
          ...match,
          rationale: record
            ? rationaleOf(record.judgment)
            : match.result === 'walkover'
              ? `the candidate's run failed (${candidate.episode?.reason ?? 'unknown reason'}), so it lost without a judgment`
              : null,
          judgment: record ? relative(run.directory, record.path) : null,
        };
      });
      return {
        version,
        championBefore: champion.championId,
        championAfter: decision.state.championId,
        promoted: decision.promoted,
        matches,
        comparisons: matches.flatMap((match) => comparisonOf(state, match, judged)),
      };
    },
    { output: SearchDecision },
  );
}

/** One pairwise judgment of two versions' workspaces, waiting out outages, within the search's judge slots. */
async function judgeMatch(
  state: TaskSearchState,
  version: string,
  first: string,
  second: string,
): Promise<PairwiseJudgment> {
  const { context, id, base } = state;
  const { judge, settings } = context;
  const [x, y] = await Promise.all([state.bundle(first), state.bundle(second)]);
  const what = `judge ${first} vs ${second}`;
  return callThroughOutages(
    context.outages,
    `${what} (${base}/${version})`,
    async () => {
      const release = await context.judgeSlots.acquire();
      try {
        context.spending.beforeWork('judge');
        return await judgePair({
          task: state.task,
          x: { label: first, bundle: x },
          y: { label: second, bundle: y },
          model: judge.model,
          modelName: judge.modelName,
          mode: settings.judgeMode,
          seed: settings.seed,
          orderKey: `${base}/${first}/${second}`,
          sampling: judge.sampling,
          maxRepairAttempts: settings.judgeRepairAttempts,
        });
      } finally {
        release();
      }
    },
    (error) => context.onProgress?.({ kind: 'lost-to-outage', task: id, version, what, error }),
  );
}

/** A match in the optimizer's terms; a failed judgment teaches nothing and is left out. */
function comparisonOf(
  state: TaskSearchState,
  match: ChampionMatch,
  judged: readonly Judged[],
): PairwiseComparison[] {
  if (match.result === 'failed') return [];
  const candidate = state.version(match.first);
  const opponent = state.version(match.second);
  const judgment = judged.find(
    (entry) => entry.first === match.first && entry.second === match.second,
  )?.judgment;
  // The candidate is x (the match's first); each judgment says whether x was shown as A.
  const shownAs = (single: PairwiseJudgment['judgments'][number]): 'A' | 'B' =>
    single.shownAsA === 'x' ? 'A' : 'B';
  const single = judgment?.mode === 'random' ? judgment.judgments[0] : undefined;
  const orders =
    judgment?.mode === 'both'
      ? judgment.judgments.flatMap((order) =>
          order.verdict
            ? [
                {
                  candidatePosition: shownAs(order),
                  rationale: order.verdict.rationale,
                  ...verdictPoints(order.verdict, shownAs(order)),
                },
              ]
            : [],
        )
      : [];
  return [
    {
      candidate: { label: candidate.label, design: candidate.design },
      opponent: { label: opponent.label, design: opponent.design },
      winner: match.result === 'first' ? 'candidate' : match.result === 'tie' ? 'tie' : 'opponent',
      rationale: match.rationale ?? '',
      candidatePosition: single ? shownAs(single) : undefined,
      ...(single?.verdict ? verdictPoints(single.verdict, shownAs(single)) : {}),
      ...(orders.length > 0 ? { orders } : {}),
      candidateExecution: candidate.episode?.execution,
    },
  ];
}

/** What the judge said, as a match records it: each order's rationale, or why there was no verdict. */
export function rationaleOf(judgment: PairwiseJudgment): string | null {
  const rationales = judgment.judgments.flatMap((single) =>
    single.verdict ? [single.verdict.rationale] : [],
  );
  if (rationales.length === 0) return judgment.failure;
  if (rationales.length === 1) return rationales[0]!;
  return rationales.map((text, index) => `Order ${index + 1}: ${text}`).join('\n');
}
