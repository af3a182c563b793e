import type { RunConfig } from '../config/run-config.js';
import type { Figure, StageWork } from './plan-types.js';
import type { UnitFigures } from './unit-figures.js';

/** The basis of a figure made of several: the first one not from the configuration, since each may differ. */
function basisOf(...figures: readonly Figure[]): string {
  const bases = [...new Set(figures.map((figure) => figure.basis))];
  return bases.join('; ');
}

const waves = (work: number, atOnce: number) => Math.ceil(work / Math.max(1, atOnce));

/**
 * A stage's wall time from its work and the units' seconds, scheduled as the stage runs it:
 * - search: `concurrency.tasks` tasks at once, each a chain (the reference and v0 together, then per iteration an
 *   optimizer call, an episode and a judgment), episodes sharing `concurrency.episodes` slots;
 * - collection: tasks one after another, each task's runs `concurrency.episodes` at once;
 * - tournament: each task's pairs `concurrency.judgments` at once (it overlaps the next task's collection: the sum of
 *   the stages is the most the run takes);
 * - training: steps at the measured seconds per step (null when nothing measured them);
 * - evaluation: episodes `evaluation.concurrency.episodes` at once, then judge calls `evaluation.concurrency.judgments`
 *   at once per judge.
 */
export function stageSeconds(
  config: RunConfig,
  stage: StageWork,
  units: UnitFigures,
  trainingSteps: number,
): Figure | null {
  const { episode, optimizerCall } = units;
  const { concurrency } = config;
  const judgment = units.judgmentSeconds.value;
  if (stage.stage === 'search') {
    const { iterations } = config.search;
    const atOnce = Math.min(stage.tasks, concurrency.tasks);
    const perJudgment = judgment;
    const chain =
      waves(2 * atOnce, concurrency.episodes) * episode.seconds.value +
      perJudgment +
      iterations *
        (optimizerCall.seconds.value +
          waves(atOnce, concurrency.episodes) * episode.seconds.value +
          perJudgment);
    return {
      value: waves(stage.tasks, concurrency.tasks) * chain,
      basis: basisOf(episode.seconds, units.judgmentSeconds, optimizerCall.seconds),
    };
  }
  if (stage.stage === 'collection') {
    const perTask = Math.ceil(stage.episodes.count / Math.max(1, stage.tasks));
    return {
      value: stage.tasks * waves(perTask, concurrency.episodes) * episode.seconds.value,
      basis: episode.seconds.basis,
    };
  }
  if (stage.stage === 'tournament') {
    const perTask = Math.ceil(stage.judgments.count / Math.max(1, stage.tasks));
    return {
      value: stage.tasks * waves(perTask, concurrency.judgments) * judgment,
      basis: units.judgmentSeconds.basis,
    };
  }
  if (stage.stage === 'training') {
    const perStep = units.trainingStepSeconds;
    return perStep ? { value: perStep.value * trainingSteps, basis: perStep.basis } : null;
  }
  if (stage.stage === 'evaluation') {
    const evaluation = config.evaluation;
    const episodesAtOnce = evaluation?.concurrency.episodes ?? concurrency.episodes;
    const judgesAtOnce =
      (evaluation?.concurrency.judgments ?? concurrency.judgments) *
      Math.max(1, Object.keys(stage.callsByJudge ?? {}).length);
    return {
      value:
        waves(stage.episodes.count, episodesAtOnce) * episode.seconds.value +
        waves(stage.judgments.count, judgesAtOnce) * judgment,
      basis: basisOf(episode.seconds, units.judgmentSeconds),
    };
  }
  return null;
}
