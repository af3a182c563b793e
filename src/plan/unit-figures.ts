import type { RunConfig } from '../config/run-config.js';
import { TYPICAL_EPISODE_OUTPUT_TOKENS } from '../doctor/doctor-plan.js';
import type { PlanThroughput } from './doctor-throughput.js';
import type { MeasuredRun } from './measured-run.js';
import type { Figure } from './plan-types.js';

/**
 * Bytes of a team episode of a paper-sized run (docs/disk-and-readers.md: requests, threads, events and a small
 * workspace), for disk when no finished run is given.
 */
export const ASSUMED_EPISODE_BYTES = 2.6e6;

/** Output tokens per second a served model is assumed to give at the configured concurrency, with no doctor record nor `--throughput`. */
export const ASSUMED_THROUGHPUT = 500;

/** What one unit of each kind of work takes: an episode, a judge call, an optimizer call. */
export interface UnitFigures {
  episode: { promptTokens: Figure | null; completionTokens: Figure; seconds: Figure; bytes: Figure };
  judgeCall: { promptTokens: Figure; completionTokens: Figure; seconds: Figure };
  /** A judgment's wall time: its bundles and its calls (both A/B orders are judged at once). */
  judgmentSeconds: Figure;
  optimizerCall: { promptTokens: Figure; completionTokens: Figure; seconds: Figure };
  /** Seconds per training step; null when nothing measured them. */
  trainingStepSeconds: Figure | null;
}

/**
 * Each unit from a finished run's means (`--like`), else from the budgets: an episode writes at most
 * `budgets.episodeOutputBudget` tokens (else the typical episode `mass doctor` assumes), a judge call reads two
 * workspace bundles and writes at most `judgeMaxTokens`, an optimizer call at most `optimizerMaxTokens`. Seconds come
 * from the output tokens at the throughput per call: `mass doctor`'s figure at the configured concurrency (its
 * record, or `--throughput`), divided among the calls at once, else an assumed one.
 */
export function unitFigures(
  config: RunConfig,
  like: MeasuredRun | null,
  throughput: PlanThroughput | null,
  throughputNote: string | null = null,
): UnitFigures {
  if (like) return measuredUnits(like);
  const { budgets, concurrency } = config;
  const rate: Figure = throughput
    ? { value: throughput.outputTokensPerSecond / concurrency.episodes, basis: throughput.basis }
    : {
        value: ASSUMED_THROUGHPUT / concurrency.episodes,
        basis:
          `assumed throughput: ${ASSUMED_THROUGHPUT} output tokens/s at ${concurrency.episodes} calls at once ` +
          `(${throughputNote ?? 'no mass doctor record: run mass doctor, or give --throughput'})`,
      };
  const output: Figure = budgets.episodeOutputBudget
    ? { value: budgets.episodeOutputBudget, basis: 'budget' }
    : {
        value: TYPICAL_EPISODE_OUTPUT_TOKENS,
        basis: `assumed: ${TYPICAL_EPISODE_OUTPUT_TOKENS.toLocaleString('en-US')} per episode (no budgets.episodeOutputBudget)`,
      };
  const seconds = (tokens: Figure): Figure => ({ value: tokens.value / rate.value, basis: rate.basis });
  const judgeOutput: Figure = { value: budgets.judgeMaxTokens, basis: 'budget' };
  const optimizerOutput: Figure = { value: budgets.optimizerMaxTokens, basis: 'budget' };
  return {
    episode: {
      promptTokens: null,
      completionTokens: output,
      seconds: seconds(output),
      bytes: { value: ASSUMED_EPISODE_BYTES, basis: 'assumed: 2.6 MB (a paper-sized team episode)' },
    },
    judgeCall: {
      promptTokens: { value: 2 * budgets.judgeBundleTokens, basis: 'budget' },
      completionTokens: judgeOutput,
      seconds: seconds(judgeOutput),
    },
    judgmentSeconds: seconds(judgeOutput),
    optimizerCall: {
      promptTokens: { value: budgets.contextWindowSize, basis: 'budget' },
      completionTokens: optimizerOutput,
      seconds: seconds(optimizerOutput),
    },
    trainingStepSeconds: null,
  };
}

function measuredUnits(like: MeasuredRun): UnitFigures {
  const basis = `measured in ${like.name}`;
  const figure = (value: number): Figure => ({ value, basis });
  return {
    episode: {
      promptTokens: figure(like.episode.promptTokens),
      completionTokens: figure(like.episode.completionTokens),
      seconds: figure(like.episode.seconds),
      bytes: figure(like.episode.bytes),
    },
    judgeCall: {
      promptTokens: figure(like.judgeCall.promptTokens),
      completionTokens: figure(like.judgeCall.completionTokens),
      seconds: figure(like.judgeCall.seconds),
    },
    judgmentSeconds: figure(like.judgmentSeconds ?? like.judgeCall.seconds),
    optimizerCall: {
      promptTokens: figure(like.optimizerCall.promptTokens),
      completionTokens: figure(like.optimizerCall.completionTokens),
      seconds: figure(like.optimizerCall.seconds),
    },
    trainingStepSeconds:
      like.training && like.training.steps > 0 ? figure(like.training.seconds / like.training.steps) : null,
  };
}
