import { join } from 'node:path';

import type { Prices } from '../config/prices.js';
import { addCost, emptyCostTotal, type CostTotal } from '../cost/cost-total.js';
import { episodeCost } from '../cost/episode-cost.js';
import { EpisodeRecord } from '../records/episode-record.js';
import type { CallCost } from '../model/types.js';
import { JudgmentRow } from '../records/evaluation-records.js';
import { PairwiseJudgmentRecord } from '../records/judgment-record.js';
import { OptimizerCallRecord } from '../records/optimizer-outcome.js';
import type { RunFiles } from '../store/run-files.js';
import {
  distillTaskPath,
  episodeFiles,
  evaluationPath,
  outerLoopFiles,
  runFiles,
  searchTaskPath,
  searchVersionPath,
} from '../store/run-paths.js';

export type ModelRole = 'executor' | 'judge' | 'optimizer';

/** Tokens of one role in one stage of the run (a generation's loop, or an evaluation). */
export interface TokenUsageRow {
  stage: string;
  role: ModelRole;
  /** Model calls (episodes: every call of every thread; judgments and proposals: every attempt). */
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** What the calls cost (reported by providers or computed from prices), and how many had no known cost. */
  cost: CostTotal;
}

class UsageTally {
  private readonly rows = new Map<string, TokenUsageRow>();

  add(
    stage: string,
    role: ModelRole,
    calls: number,
    usage: { promptTokens: number; completionTokens: number; cost?: CallCost | null },
  ): void {
    const key = `${stage}\u0000${role}`;
    const row = this.rows.get(key) ?? {
      stage,
      role,
      calls: 0,
      promptTokens: 0,
      completionTokens: 0,
      cost: emptyCostTotal(),
    };
    row.calls += calls;
    row.promptTokens += usage.promptTokens;
    row.completionTokens += usage.completionTokens;
    // Calls that spent no token were not billed: they are neither priced nor unpriced.
    if (usage.promptTokens + usage.completionTokens > 0) addCost(row.cost, usage.cost, calls);
    this.rows.set(key, row);
  }

  list(): TokenUsageRow[] {
    const roleOrder: ModelRole[] = ['executor', 'judge', 'optimizer'];
    return [...this.rows.values()].sort(
      (a, b) => a.stage.localeCompare(b.stage) || roleOrder.indexOf(a.role) - roleOrder.indexOf(b.role),
    );
  }
}

/**
 * Tokens per role, summed from the records that hold them: each episode's usage (the executor), each judgment's
 * (the judge: the search's verdicts and the tournaments' matches), each optimizer call's, and the evaluations'.
 * `generationOf` names the generation of a served model name, so an episode is counted under the generation that ran it.
 * Costs come from the records (each call's reported or computed cost); an episode's, when its record holds none, is
 * computed from its tokens at `executorPrices` (the run's executor endpoint's).
 */
export async function readTokenUsage(
  files: RunFiles,
  generationOf: (servedAs: string) => string,
  evaluations: readonly string[],
  executorPrices?: Prices,
): Promise<TokenUsageRow[]> {
  const tally = new UsageTally();
  await addEpisodes(files, runFiles.episodes, tally, generationOf, executorPrices);
  for (const generation of await files.folders(runFiles.search)) {
    for (const task of await files.folders(join(runFiles.search, generation))) {
      for (const version of await files.folders(searchTaskPath(generation, task))) {
        const optimizer = await files.record(
          OptimizerCallRecord,
          searchVersionPath(generation, task, version, 'optimizer'),
        );
        if (optimizer) {
          const { usage, attempts } = optimizer.outcome;
          tally.add(generation, 'optimizer', attempts.length, usage);
        }
        await addJudgments(
          files,
          searchVersionPath(generation, task, version, 'judgments'),
          generation,
          tally,
        );
      }
    }
  }
  for (const generation of await files.folders(runFiles.distill)) {
    for (const task of await files.folders(join(runFiles.distill, generation))) {
      const judgments = distillTaskPath(generation, task, outerLoopFiles.judgments);
      await addJudgments(files, judgments, generation, tally);
    }
  }
  for (const name of evaluations) {
    const stage = `evaluation ${name}`;
    await addEpisodes(files, evaluationPath(name, 'episodes'), tally, () => stage, executorPrices);
    const rows = await files.jsonLines(
      JudgmentRow,
      evaluationPath(name, 'judgments'),
      'an evaluation judgment',
    );
    for (const row of rows) {
      tally.add(stage, 'judge', row.attempts.length, row.usage);
    }
  }
  return tally.list();
}

async function addEpisodes(
  files: RunFiles,
  folder: string,
  tally: UsageTally,
  stageOf: (servedAs: string) => string,
  prices: Prices | undefined,
): Promise<void> {
  for (const episode of await files.folders(folder)) {
    // An episode still running (or stopped) has no episode.json yet: it has no usage to count.
    const record = await files.record(EpisodeRecord, join(folder, episode, episodeFiles.record));
    if (!record) continue;
    const { promptTokens, completionTokens } = record.usage.total;
    tally.add(stageOf(record.model), 'executor', record.modelCalls, {
      promptTokens,
      completionTokens,
      cost: episodeCost(record, prices),
    });
  }
}

async function addJudgments(
  files: RunFiles,
  folder: string,
  stage: string,
  tally: UsageTally,
): Promise<void> {
  for (const name of await files.files(folder, '.json')) {
    const judgment = await files.record(PairwiseJudgmentRecord, join(folder, name));
    if (!judgment) continue;
    const calls = judgment.judgments.reduce((sum, single) => sum + single.attempts.length, 0);
    tally.add(stage, 'judge', calls, judgment.usage);
  }
}
