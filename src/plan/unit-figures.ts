import type { RunConfig } from '../config/run-config.js';
import { isBuiltInToy } from '../hosting/model-kind.js';
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
  if (throughput === null && isBuiltInToy(config)) return toyUnits(config);
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

/** A toy episode's wall time with others at once on 2 cores, a judge's or optimizer's call, a training step; seconds. */
const TOY_EPISODE_SECONDS = 8;
const TOY_CALL_SECONDS = 0.2;
const TOY_TRAINING_STEP_SECONDS = 1;
/** What a toy episode writes (the demo's: about 4,000 output tokens) and the bytes its folder holds (0.4–0.7 MB). */
const TOY_EPISODE_OUTPUT_TOKENS = 4_000;
const TOY_EPISODE_BYTES = 0.7e6;

/**
 * The built-in toy model's units, measured by `mass demo` on 2 cores (2026-12-04: its loop's 24 episodes, 2 at once, in
 * 98 s): the model answers at once, so an episode takes what the harness and the sandbox take, and a call to the judge
 * or the optimizer a fraction of a second; the toy trains with one step of about a second.
 */
function toyUnits(config: RunConfig): UnitFigures {
  const { budgets } = config;
  const basis =
    'assumed: the built-in toy model answers at once; an episode takes about 8 s of harness and sandbox time';
  const output: Figure = {
    value: TOY_EPISODE_OUTPUT_TOKENS,
    basis: "assumed: the toy model's scripted team",
  };
  const call = (completion: number) => ({ value: completion, basis: 'budget' });
  const quick: Figure = { value: TOY_CALL_SECONDS, basis };
  return {
    episode: {
      promptTokens: null,
      completionTokens: output,
      seconds: { value: TOY_EPISODE_SECONDS, basis },
      bytes: { value: TOY_EPISODE_BYTES, basis: 'assumed: 0.7 MB (a toy episode)' },
    },
    judgeCall: {
      promptTokens: { value: 2 * budgets.judgeBundleTokens, basis: 'budget' },
      completionTokens: call(budgets.judgeMaxTokens),
      seconds: quick,
    },
    judgmentSeconds: quick,
    optimizerCall: {
      promptTokens: { value: budgets.contextWindowSize, basis: 'budget' },
      completionTokens: call(budgets.optimizerMaxTokens),
      seconds: quick,
    },
    trainingStepSeconds: { value: TOY_TRAINING_STEP_SECONDS, basis: "assumed: the toy trainer's one step" },
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
