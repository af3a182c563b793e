import { availableParallelism } from 'node:os';
import { join } from 'node:path';

import type { EpisodeSettings } from '../episode/episode-settings.js';
import { errorMessage } from '../errors.js';
import { sandboxedEntryPointRunner } from '../episode/entry-point-sandbox.js';
import { EpisodeRecord } from '../records/episode-record.js';
import type { JsonlAppender } from '../proxy/jsonl-appender.js';
import type { EpisodeBackend } from '../queue/episode-backend.js';
import { runEpisodeThroughOutages } from '../search/outage-gate.js';
import type { Run } from '../store/run-store.js';
import { gradeWorkspace } from '../tasks/grade.js';
import type { LoadedTask } from '../tasks/load-task.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { EvaluationEpisode, GradeRow, type EvaluationCondition } from '../records/evaluation-records.js';
import type { ServedModel } from './serve-evaluation.js';
import { episodeFiles, episodePath } from '../store/run-paths.js';
import { evaluationEpisodeKey, gradeKey } from '../work/step-keys.js';
import type { WorkItem } from '../work/work-item.js';

export interface EvaluationEpisodeSpec {
  model: ServedModel;
  /**
   * The name the episode's records carry (its id, folder and step key): default the model's name; a workflow
   * transfer's side has a label of its own (`L0-with-L1-designs`), since one model runs both sides.
   */
  label?: string;
  task: LoadedTask;
  condition: EvaluationCondition;
  /** The design rendered into the prompt: the `workflow` condition's, or a transfer side's; none for the bare task. */
  workflow?: TeamDesign;
  replicate: number;
  samplingSeed: number;
  dataSeed: number;
}

/** Where an evaluation's episodes run, and how many at a time per model server. */
export interface EvaluationEpisodeRunner {
  episodes: EpisodeBackend;
  /** Episodes at a time on one model server (`evaluation.concurrency.episodes`). */
  concurrency: number;
}

/**
 * One evaluation episode as work (`evaluation/<name>/episode/<label>/<task>/<condition>/<replicate>`), in
 * `evaluation/<name>/episodes/<label>-<task>-<condition>-<replicate>/` (the label: the model's name, or a transfer
 * side's), in one of the `episodes` slots of its model's server (`concurrency` at a time). A finished episode is never
 * run again; the episode directory of an interrupted one is cleaned and run again. An episode lost to the model
 * server being down is redone once it answers, never counted as a failed rollout.
 */
export function evaluationEpisodeWork(
  run: Run<unknown>,
  base: string,
  spec: EvaluationEpisodeSpec,
  settings: EpisodeSettings,
  where: EvaluationEpisodeRunner,
): WorkItem<typeof EvaluationEpisode> {
  const { model, task, condition, replicate } = spec;
  const label = spec.label ?? model.name;
  const taskId = task.manifest.id;
  const episodeId = `${label}-${taskId}-${condition}-${replicate}`;
  const dir = join(base, 'episodes', episodeId);
  const stepKey = evaluationEpisodeKey(base, { label, task: taskId, condition, replicate });
  return {
    kind: 'episode',
    key: stepKey,
    output: EvaluationEpisode,
    produces: [episodePath(dir, 'record')],
    slots: { pool: 'episodes', key: model.baseUrl, limit: where.concurrency },
    server: model,
    perform: async ({ gate }) => {
      const options = {
        ...settings,
        taskDir: task.dir,
        ...(spec.workflow ? { workflow: spec.workflow } : {}),
        teacher: false,
        singleAgent: condition === 'single-agent',
        model: model.model,
        baseUrl: model.baseUrl,
        apiKey: model.apiKey,
        seed: spec.samplingSeed,
        dataSeed: spec.dataSeed,
        outDir: run.path(dir),
        hiddenDirectories: [run.directory],
      };
      const { record } = await runEpisodeThroughOutages(
        gate!,
        { id: episodeId, outDir: options.outDir },
        () => where.episodes.run({ stepKey, apiKeyEnv: model.apiKeyEnv, options }),
      );
      return describeEpisode(record, {
        episodeId,
        dir,
        model: label,
        task: taskId,
        condition,
        replicate,
        samplingSeed: spec.samplingSeed,
        dataSeed: spec.dataSeed,
      });
    },
  };
}

function describeEpisode(
  record: EpisodeRecord,
  identity: Pick<
    EvaluationEpisode,
    'episodeId' | 'dir' | 'model' | 'task' | 'condition' | 'replicate' | 'samplingSeed' | 'dataSeed'
  >,
): EvaluationEpisode {
  return {
    ...identity,
    status: record.status,
    failure: record.failure ? `${record.failure.kind}: ${record.failure.detail}` : null,
    outputTokens: record.usage.total.completionTokens,
    delegations: record.delegations,
    subagentThreads: record.usage.perThread.filter((thread) => thread.role === 'subagent').length,
    tampered: record.integrity.tampered,
    workflowHash: record.workflowHash,
  };
}

/** An episode to grade: an evaluation episode, or a run of the loop's own collection (for the reward-hacking count). */
export interface GradedEpisode {
  episodeId: string;
  /** Relative to the run directory. */
  dir: string;
  task: LoadedTask;
  dataSeed: number;
}

/** Graders at a time: one per core. */
const GRADE_SLOTS = { pool: 'grades', key: 'local', limit: Math.max(1, availableParallelism()) };

/**
 * The oracle on one episode as work (`<base>/grade/<episode id>`): the task's withheld grader with the data seed, one
 * per core at a time. The task's entry point, if it has one, is rerun for the grader's reproducibility part,
 * sandboxed as the episode was (its record says; bubblewrap when it has none). The row goes to `grades.jsonl` and is
 * the step's output; a grader that fails is recorded (grade null), not thrown, so one broken workspace does not stop
 * an evaluation.
 */
export function gradeWork(
  run: Run<unknown>,
  base: string,
  episode: GradedEpisode,
  grades: JsonlAppender,
): WorkItem<typeof GradeRow> {
  const key = gradeKey(base, episode.episodeId);
  return {
    kind: 'grade',
    key,
    output: GradeRow,
    slots: GRADE_SLOTS,
    perform: async (): Promise<GradeRow> => {
      const common = {
        schemaVersion: 1 as const,
        kind: 'evaluation-grade' as const,
        key,
        episodeId: episode.episodeId,
        dir: episode.dir,
        task: episode.task.manifest.id,
        dataSeed: episode.dataSeed,
      };
      let row: GradeRow;
      try {
        const record = await EpisodeRecord.readIfPresent(run.path(episode.dir, episodeFiles.record));
        const mode = record?.sandbox.enabled === false ? 'unsandboxed' : 'bubblewrap';
        const grade = await gradeWorkspace(episode.task, {
          workspaceDir: run.path(episode.dir, episodeFiles.workspace),
          seed: episode.dataSeed,
          rerun: { runner: sandboxedEntryPointRunner({ mode, warn: () => {} }) },
        });
        row = {
          ...common,
          grade: grade.score,
          parts: grade.parts.map((part) => ({ name: part.name, score: part.score, weight: part.weight })),
          error: null,
        };
      } catch (error) {
        row = { ...common, grade: null, parts: [], error: errorMessage(error) };
      }
      await grades.append(JSON.stringify(GradeRow.parse(row)));
      return row;
    },
  };
}
