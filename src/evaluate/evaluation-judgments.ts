import { createHash } from 'node:crypto';

import { z } from 'zod';

import type { EvaluationOrders } from '../config/evaluation-settings.js';
import type { EvaluationConfig } from '../config/run-config.js';
import { UserError } from '../errors.js';
import type { WorkspaceBundle } from '../judge/bundle.js';
import type { PairWinner, SingleJudgment } from '../records/judgment-record.js';
import { judgePair } from '../judge/pairwise-judge.js';
import type { JsonlAppender } from '../proxy/jsonl-appender.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { JudgmentRow } from '../records/evaluation-records.js';
import type { ServedJudge } from './serve-evaluation.js';
import type { WorkItem } from '../work/work-item.js';

/** Two episodes of one task to be judged, the candidate's first: an evaluation pair or a sampled tournament match. */
export interface JudgedEpisodes {
  sample: string;
  task: LoadedTask;
  condition: string;
  replicate: number;
  candidate: { label: string; episodeId: string; bundle: () => Promise<WorkspaceBundle> };
  baseline: { label: string; episodeId: string; bundle: () => Promise<WorkspaceBundle> };
}

/** Two rows under `orders: both`, one under `random`. */
const JudgmentRows = z.array(JudgmentRow).min(1).max(2);

/** The judgments (rows of `judgments.jsonl`) one judgment step makes: one per A/B order judged. */
export function judgmentsPerStep(orders: EvaluationOrders): number {
  return orders === 'both' ? 2 : 1;
}

/** How an evaluation judges (`judgmentWork`'s settings): its orders, repairs, judgments at a time per judge. */
export function evaluationJudging(
  evaluation: Pick<EvaluationConfig, 'orders' | 'judgeRepairAttempts' | 'concurrency'>,
  judgments: JsonlAppender,
): Pick<Parameters<typeof judgmentWork>[0], 'orders' | 'repairAttempts' | 'concurrency' | 'judgments'> {
  return {
    orders: evaluation.orders,
    repairAttempts: evaluation.judgeRepairAttempts,
    concurrency: evaluation.concurrency.judgments,
    judgments,
  };
}

/**
 * One judge with one seed on one pair as work, in both A/B orders (`orders: both`), in one drawn from the seed and the
 * step's key (`random`: the same configuration draws the same orders, and each pair, judge and seed its own), or in
 * the one the official code draws from the seed alone (`official`): a row of `judgments.jsonl` per order, which are
 * also the step's output. The pair's bundles are read before one of the judge's `judgments` slots (`concurrency` at a
 * time) is taken. The key is the same under every setting, so a finished step of an evaluation made with another
 * setting would come back with the wrong number of rows: that is refused, since mixing them would misstate the
 * evaluation's protocol. A verdict that stays malformed after the judge's repairs is recorded as failed; a server
 * that keeps failing stops the step (the next run redoes it).
 */
export function judgmentWork(options: {
  /** From step-keys.ts (`judgmentKey`). */
  key: string;
  pair: JudgedEpisodes;
  judge: ServedJudge;
  seed: number;
  orders: EvaluationOrders;
  repairAttempts: number;
  concurrency: number;
  judgments: JsonlAppender;
}): WorkItem<typeof JudgmentRows, [WorkspaceBundle, WorkspaceBundle]> {
  const { key, pair, judge, seed, orders } = options;
  return {
    kind: 'judgment',
    key,
    output: JudgmentRows,
    slots: { pool: 'judgments', key: judge.name, limit: options.concurrency },
    prepare: () => Promise.all([pair.candidate.bundle(), pair.baseline.bundle()]),
    perform: async (_context, [candidate, baseline]): Promise<JudgmentRow[]> => {
      const judgment = await judgePair({
        task: pair.task,
        x: { label: pair.candidate.episodeId, bundle: candidate },
        y: { label: pair.baseline.episodeId, bundle: baseline },
        model: judge.model,
        modelName: judge.modelName,
        mode: orders,
        seed,
        orderKey: key,
        sampling: { ...judge.sampling, seed },
        maxRepairAttempts: options.repairAttempts,
      });
      const rows = judgment.judgments.map((single) => judgmentRow(key, pair, judge, seed, single));
      await options.judgments.append(rows.map((row) => JSON.stringify(row)).join('\n'));
      return rows;
    },
    check: (finished) => {
      if (finished.length === judgmentsPerStep(orders)) return;
      // official's seeds (42, 43…) are not random's (0, 1…): a step key never holds a judgment of the other.
      const made = finished.length === 2 ? 'both' : 'random';
      throw new UserError(
        `evaluation.orders: ${key} was judged with orders: ${made}, and the configuration now says ${orders}; ` +
          `an evaluation keeps the orders it was made with: set orders back to ${made}, or give evaluation.name another name`,
      );
    },
  };
}

function judgmentRow(
  key: string,
  pair: JudgedEpisodes,
  judge: ServedJudge,
  seed: number,
  single: SingleJudgment,
): JudgmentRow {
  return JudgmentRow.parse({
    schemaVersion: 1,
    kind: 'evaluation-judgment',
    key,
    sample: pair.sample,
    task: pair.task.manifest.id,
    condition: pair.condition,
    replicate: pair.replicate,
    candidate: pair.candidate.label,
    baseline: pair.baseline.label,
    candidateEpisode: pair.candidate.episodeId,
    baselineEpisode: pair.baseline.episodeId,
    judge: judge.name,
    judgeModel: judge.modelName,
    seed,
    order: single.shownAsA === 'x' ? 'candidate-first' : 'baseline-first',
    status: single.status,
    outcome: outcomeOf(single.winner),
    repairs: single.attempts.length - 1,
    promptHashes: { system: sha256(single.prompt.system), user: sha256(single.prompt.user) },
    attempts: single.attempts.map((attempt) => ({
      rawOutput: attempt.rawOutput,
      finishReason: attempt.finishReason,
      parse: attempt.parse.ok
        ? { ok: true, winner: attempt.parse.verdict.winner, rationale: attempt.parse.verdict.rationale }
        : { ok: false, error: attempt.parse.error },
      usage: attempt.usage,
    })),
    usage: single.usage,
    failure: single.failure,
  });
}

/** From the candidate's side (the pair's x). */
function outcomeOf(winner: PairWinner | null): 'win' | 'loss' | 'tie' | null {
  if (winner === null) return null;
  return winner === 'tie' ? 'tie' : winner === 'x' ? 'win' : 'loss';
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
