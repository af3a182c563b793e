import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { z } from 'zod';

import { SystemError, UserError } from '../errors.js';
import { workflowInformationPath } from '../store/run-paths.js';
import { runAnalysisScript } from './analysis-script.js';
import { designSeries } from './design-series.js';
import type { Embedder } from './embeddings.js';
import { readGenerationDesigns } from './search-designs.js';
import { WORKFLOW_COMPONENTS } from '../workflow/workflow-components.js';
import type { InformationEstimate } from '../records/workflow-information-record.js';
import {
  WorkflowComponentName,
  WorkflowInformationRecord,
  type WorkflowInformation,
} from '../records/workflow-information-record.js';

interface EstimatorSettings {
  /** Principal components kept of each embedding (default 3); the tasks' at most one fewer than there are tasks. */
  dimensions?: number;
  /** Shuffles of the tasks for the baseline (default 200). */
  permutations?: number;
  /** Bootstrap resamples of the tasks (default 200). */
  bootstrap?: number;
  /** Shuffles that adjust each resample (default 20). */
  bootstrapPermutations?: number;
  confidence?: number;
  seed?: number;
}

interface WorkflowInformationOptions extends EstimatorSettings {
  runDirectory: string;
  generation: string;
  embedder: Embedder;
}

export const ESTIMATOR_NAME = 'Gaussian mutual information after PCA';

/**
 * The paper's Figure 5 for one generation of a run: the designs of every task's search (first, final, champion and
 * every iteration) split into components, embedded with the task descriptions, and the mutual information between
 * each component and the task estimated (unadjusted, and adjusted by a seeded permutation baseline, with bootstrap
 * intervals over tasks), with the dependence between an agent's components. Written to
 * `analysis/workflows/<generation>.json` and returned.
 */
export async function analyzeWorkflowInformation(
  options: WorkflowInformationOptions,
): Promise<WorkflowInformation> {
  const runDirectory = resolve(options.runDirectory);
  const read = await readGenerationDesigns(runDirectory, options.generation);
  const plan = designSeries(read.tasks);
  const notes = [...read.notes, ...plan.notes];
  const analysed = new Set(plan.series.flatMap((series) => series.items.map((item) => item.task)));
  if (analysed.size < 2) {
    throw new UserError(
      `generation ${options.generation} has ${analysed.size === 0 ? 'no task' : 'one task'} with a structured design to analyse; the analysis compares tasks, so it needs at least two${notes.length ? ` (${notes.join('; ')})` : ''}`,
    );
  }

  const texts = [
    ...read.tasks.map((task) => task.description),
    ...plan.series.flatMap((series) => series.items.map((item) => item.text)),
  ];
  const distinct = [...new Set(texts)];
  const index = new Map(distinct.map((text, position) => [text, position]));
  const embeddings = await options.embedder.embed(distinct);

  const settings = {
    permutations: options.permutations ?? 200,
    bootstrap: options.bootstrap ?? 200,
    bootstrapPermutations: options.bootstrapPermutations ?? 20,
    confidence: options.confidence ?? 0.95,
    seed: options.seed ?? 0,
  };
  const output = ScriptOutput.parse(
    await runAnalysisScript('analyze', {
      ...settings,
      dimensions: options.dimensions ?? null,
      vectors: embeddings.vectors,
      tasks: read.tasks.map((task) => ({ task: task.task, vector: index.get(task.description)! })),
      components: WORKFLOW_COMPONENTS,
      series: plan.series.map((series) => ({
        label: series.label,
        items: series.items.map((item) => ({
          task: item.task,
          agent: item.agent,
          component: item.component,
          vector: index.get(item.text)!,
        })),
      })),
    }),
  );

  if (output.series.length !== plan.series.length) {
    throw new SystemError(
      `the workflow analysis script returned ${output.series.length} series for ${plan.series.length}`,
    );
  }
  const taskNames = read.tasks.map((task) => task.task);
  const record: WorkflowInformation = {
    generation: options.generation,
    tasks: read.tasks.map((task) => ({
      task: task.task,
      versions: task.designs.map((design) => design.version),
      champion: task.champion,
    })),
    embedding: embeddings.method,
    estimator: { name: ESTIMATOR_NAME, units: 'nats', ...output.summary, ...settings },
    series: plan.series.map((series, position) => ({
      label: series.label,
      versions: series.versions.map((entry) => ({ task: taskNames[entry.task]!, version: entry.version })),
      information: output.series[position]!.information,
      dependence: output.series[position]!.dependence,
    })),
    limits: limits(analysed.size, embeddings.method.kind),
    notes,
  };
  const file = join(runDirectory, workflowInformationPath(options.generation));
  await mkdir(dirname(file), { recursive: true });
  await WorkflowInformationRecord.write(file, record);
  return record;
}

/** What the sample cannot say, stated with the numbers as the paper states it for its own. */
function limits(tasks: number, embedding: 'offline' | 'endpoint'): string[] {
  const pair =
    tasks === 2
      ? [
          'With 2 tasks a shuffle either keeps the pairing or swaps it, and a swap tells as much as the true pairing: the adjusted value is 0 by construction, whatever the designs say.',
        ]
      : [];
  return [
    `${tasks} tasks: every interval is over tasks, so it is wide with the 8 to 12 tasks of a search, and says little with fewer.`,
    'The agents of one design are not independent samples: the intervals resample whole tasks and the baseline moves a design’s agents together, but the sample size is the tasks, not the agents.',
    'The Gaussian estimate sees linear dependence between a few principal components of the embeddings, and nothing beyond them.',
    embedding === 'offline'
      ? 'The offline embedding (TF-IDF + truncated SVD) measures shared wording, not meaning; the paper used text-embedding-3-large and all-mpnet-base-v2 (give --embeddings for a model’s).'
      : 'The numbers are those of one embedding model; the paper reports two (text-embedding-3-large and all-mpnet-base-v2).',
    ...pair,
  ];
}

/** An estimate as the script writes it: a skipped one has no numbers. */
const ScriptEstimate = z.object({
  samples: z.number().int(),
  tasks: z.number().int(),
  mi: z.number().optional(),
  baseline: z.number().optional(),
  adjusted: z.number().optional(),
  pValue: z.number().optional(),
  interval: z.tuple([z.number(), z.number()]).nullable().optional(),
  adjustedInterval: z.tuple([z.number(), z.number()]).nullable().optional(),
  skipped: z.string().optional(),
});

function filled<T extends z.infer<typeof ScriptEstimate>>(
  value: T,
): Omit<T, keyof InformationEstimate> & InformationEstimate {
  return {
    ...value,
    mi: value.mi ?? null,
    baseline: value.baseline ?? null,
    adjusted: value.adjusted ?? null,
    pValue: value.pValue ?? null,
    interval: value.interval ?? null,
    adjustedInterval: value.adjustedInterval ?? null,
    skipped: value.skipped ?? null,
  };
}

const ScriptOutput = z
  .object({
    dimensions: z.object({ task: z.number().int(), components: z.record(z.string(), z.number().int()) }),
    explainedVariance: z.object({ task: z.number(), components: z.record(z.string(), z.number()) }),
    series: z.array(
      z.object({
        label: z.string(),
        information: z.array(ScriptEstimate.extend({ component: WorkflowComponentName })),
        dependence: z.array(
          ScriptEstimate.extend({ first: WorkflowComponentName, second: WorkflowComponentName }),
        ),
      }),
    ),
  })
  .transform((value) => ({
    summary: { dimensions: value.dimensions, explainedVariance: value.explainedVariance },
    series: value.series.map((series) => ({
      information: series.information.map(filled),
      dependence: series.dependence.map(filled),
    })),
  }));
