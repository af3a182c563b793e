import { taskDataSeed, type DataSeeds } from '../config/data-seeds.js';
import { judgeSeeds } from '../config/judge-orders.js';
import type { EvaluationConfig, RunConfig } from '../config/run-config.js';
import type { EpisodeSettings } from '../episode/episode-settings.js';
import { UserError } from '../errors.js';
import type { JsonlAppender } from '../proxy/jsonl-appender.js';
import type { Run } from '../store/run-store.js';
import { hasGrader } from '../tasks/grade.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { judgmentKey } from '../work/step-keys.js';
import type { Study, WorkRunner } from '../work/work-runner.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { evaluationEpisodeWork, gradeWork, type EvaluationEpisodeRunner } from './evaluation-episodes.js';
import { evaluationJudging, judgmentWork } from './evaluation-judgments.js';
import type { EvaluationPlan } from './evaluation-plan.js';
import type {
  EvaluationCondition,
  EvaluationEpisode,
  GradeRow,
  JudgmentRow,
} from '../records/evaluation-records.js';
import type { ServedEvaluation, ServedJudge } from './serve-evaluation.js';
import { TRANSFER_CONDITION, type TransferComparison, type TransferDesign } from './transfer-plan.js';
import type { BundleOf } from './workspace-bundles.js';

/** What the evaluation's pairs gave, every piece settled: the summary's episodes, grades and judgments. */
export interface EvaluatedPairs {
  episodes: EvaluationEpisode[];
  grades: GradeRow[];
  judgments: JudgmentRow[];
}

interface EvaluationPairsOptions {
  run: Run<RunConfig>;
  /** `evaluation/<name>`: the folder and the prefix of the step keys. */
  base: string;
  evaluation: EvaluationConfig;
  plan: EvaluationPlan;
  served: ServedEvaluation;
  /** The `workflow` condition's design per task. */
  workflows: ReadonlyMap<string, TeamDesign>;
  transfers: readonly TransferComparison[];
  settings: EpisodeSettings;
  seeds: DataSeeds;
  episodes: EvaluationEpisodeRunner;
  grades: JsonlAppender;
  judgments: JsonlAppender;
  bundleOf: BundleOf;
  /** Called once everything is planned, before any of it has to finish. */
  onPlanned?: (work: WorkRunner) => Promise<void> | void;
}

/**
 * The evaluation's own pairs as a study: for every comparison, task, condition and replicate, each side's episode
 * (run once however many pairs it belongs to), the oracle's grade of each episode of a task with a grader, and every
 * judge with every seed on the pair as soon as both episodes are there; then the workflow transfers' pairs, one
 * executor on both sides (judged by the external judges alone: the self-judge measures a generation judging itself).
 */
export function evaluationPairs(
  options: EvaluationPairsOptions,
): Study<Array<Promise<unknown>>, EvaluatedPairs> {
  const { run, base, evaluation, plan, served } = options;
  const samplingSeed = evaluation.seed ?? run.config.seed;
  const episodes = new Map<string, Promise<EvaluationEpisode>>();
  const grades: Array<Promise<GradeRow | null>> = [];
  const judged: Array<Promise<JudgmentRow[] | null>> = [];
  return {
    plan: async (work) => {
      /** A side's episode of one task and replicate, and its grade: planned once. */
      const episodeOf = (side: EpisodeSide, task: LoadedTask, replicate: number) => {
        const model = served.models.get(side.model)!;
        const item = evaluationEpisodeWork(
          run,
          base,
          {
            model,
            label: side.label,
            task,
            condition: side.condition,
            workflow: side.workflow,
            replicate,
            samplingSeed: samplingSeed + replicate,
            dataSeed: taskDataSeed(options.seeds, task.manifest.id),
          },
          options.settings,
          options.episodes,
        );
        let episode = episodes.get(item.key);
        if (episode) return episode;
        const { designHash } = side;
        episode = work.submit(
          designHash === undefined ? item : { ...item, check: (ran) => assertRanDesign(ran, designHash) },
        );
        episodes.set(item.key, episode);
        // A task without a grader is measured by the judges alone; the summary says so (figures.grading).
        if (hasGrader(task)) {
          grades.push(
            work.after('grade', episode, (finished) =>
              gradeWork(run, base, { ...finished, task }, options.grades),
            ),
          );
        }
        return episode;
      };
      const judgePair = (pair: {
        candidate: EpisodeSide;
        baseline: EpisodeSide;
        task: LoadedTask;
        replicate: number;
        judges: readonly ServedJudge[];
      }) => {
        const { candidate, baseline, task, replicate } = pair;
        const condition = candidate.condition;
        const both = Promise.all([
          episodeOf(candidate, task, replicate),
          episodeOf(baseline, task, replicate),
        ]);
        const item = {
          kind: 'pair' as const,
          candidate: candidate.label,
          baseline: baseline.label,
          task: task.manifest.id,
          condition,
          replicate,
        };
        for (const judge of pair.judges) {
          for (const seed of judgeSeeds(evaluation.orders, evaluation.judgeSeeds)) {
            judged.push(
              work.after('judgment', both, ([first, second]) =>
                judgmentWork({
                  key: judgmentKey(base, item, judge.name, seed),
                  pair: {
                    sample: 'evaluation',
                    task,
                    condition,
                    replicate,
                    candidate: {
                      label: candidate.label,
                      episodeId: first.episodeId,
                      bundle: () =>
                        options.bundleOf(task, { episodeId: first.episodeId, location: run.path(first.dir) }),
                    },
                    baseline: {
                      label: baseline.label,
                      episodeId: second.episodeId,
                      bundle: () =>
                        options.bundleOf(task, {
                          episodeId: second.episodeId,
                          location: run.path(second.dir),
                        }),
                    },
                  },
                  judge,
                  seed,
                  ...evaluationJudging(evaluation, options.judgments),
                }),
              ),
            );
          }
        }
      };

      const modelSide = (model: string, task: LoadedTask, condition: EvaluationCondition): EpisodeSide => ({
        label: model,
        model,
        condition,
        workflow: condition === 'workflow' ? options.workflows.get(task.manifest.id) : undefined,
      });
      for (const { candidate, baseline } of plan.comparisons) {
        const selfJudge = served.selfJudges.get(candidate);
        for (const task of plan.tasks) {
          for (const condition of evaluation.conditions) {
            for (let replicate = 0; replicate < evaluation.rollouts; replicate++) {
              judgePair({
                candidate: modelSide(candidate, task, condition),
                baseline: modelSide(baseline, task, condition),
                task,
                replicate,
                judges: [...served.judges, ...(selfJudge ? [selfJudge] : [])],
              });
            }
          }
        }
      }
      for (const transfer of options.transfers) {
        for (const { task, candidate, baseline } of transfer.tasks) {
          for (let replicate = 0; replicate < evaluation.rollouts; replicate++) {
            judgePair({
              candidate: transferSide(transfer.candidate, transfer.executor, candidate),
              baseline: transferSide(transfer.baseline, transfer.executor, baseline),
              task,
              replicate,
              judges: served.judges,
            });
          }
        }
      }
      await options.onPlanned?.(work);
      return [...episodes.values(), ...grades, ...judged];
    },
    summarise: async () => ({
      episodes: await Promise.all(episodes.values()),
      grades: (await Promise.all(grades)).filter((row) => row !== null),
      judgments: (await Promise.all(judged)).flatMap((rows) => rows ?? []),
    }),
  };
}

/** The episodes of one side of a pair: who runs them, under which label and condition, with which design. */
interface EpisodeSide {
  /** The name its records carry: the model's, or a transfer side's label. */
  label: string;
  /** The evaluated model that runs it. */
  model: string;
  condition: EvaluationCondition;
  /** The design rendered into the prompt; none: the bare task. */
  workflow?: TeamDesign;
  /** A transfer side's: the hash of the design its plan gives it (null: bare), checked against what ran. */
  designHash?: string | null;
}

function transferSide(label: string, executor: string, design: TransferDesign): EpisodeSide {
  return {
    label,
    model: executor,
    condition: TRANSFER_CONDITION,
    workflow: design.design ?? undefined,
    designHash: design.designHash,
  };
}

/**
 * A finished transfer episode must have run the design its side is planned with now. It would not when the
 * generation's search went on after the episode (a new champion): the figures would then mix two designs under one
 * label, so that is refused rather than measured.
 */
function assertRanDesign(episode: EvaluationEpisode, designHash: string | null): void {
  if (episode.workflowHash === undefined || episode.workflowHash === designHash) return;
  throw new UserError(
    `evaluation.transfer: ${episode.dir} ran design ${episode.workflowHash ?? 'none (the bare task)'}, but its side's ` +
      `search champion is now ${designHash ?? 'the bare task'} (the search went on since): give evaluation.name ` +
      `another name to evaluate the new designs`,
  );
}
