import { z } from 'zod';

import { defineRecord } from '../store/record.js';
import { EmbeddingMethod } from './embedding-method.js';
import { WORKFLOW_COMPONENTS } from '../workflow/workflow-components.js';

const Interval = z.tuple([z.number(), z.number()]).nullable();

/** One mutual-information estimate (nats), or why there is none (`skipped`). */
export const InformationEstimate = z.object({
  /** Agents (pairs of an agent's components, for a dependence) the estimate is made from. */
  samples: z.number().int().nonnegative(),
  tasks: z.number().int().nonnegative(),
  /** Unadjusted: the Gaussian mutual information of the true pairing. */
  mi: z.number().nullable(),
  /** The mean over the seeded shuffles that break the pairing. */
  baseline: z.number().nullable(),
  /** `mi` less `baseline`: about 0 when there is no dependence. */
  adjusted: z.number().nullable(),
  /** The share of shuffles at least as informative as the true pairing (one added above and below). */
  pValue: z.number().nullable(),
  /** Percentile bootstrap intervals over tasks, of `mi` and of `adjusted`. */
  interval: Interval,
  adjustedInterval: Interval,
  skipped: z.string().nullable(),
});
export type InformationEstimate = z.infer<typeof InformationEstimate>;

export const WorkflowComponentName = z.enum(WORKFLOW_COMPONENTS);

export const SeriesInformation = z.object({
  /** `first`, `final`, `champion` or `v<k>`. */
  label: z.string(),
  /** The version each task contributed. */
  versions: z.array(z.object({ task: z.string(), version: z.string() })),
  /** How much each component's text tells about its task. */
  information: z.array(InformationEstimate.extend({ component: WorkflowComponentName })),
  /** How much one component of an agent tells about another of the same agent. */
  dependence: z.array(
    InformationEstimate.extend({ first: WorkflowComponentName, second: WorkflowComponentName }),
  ),
});
export type SeriesInformation = z.infer<typeof SeriesInformation>;

/** `analysis/workflows/<generation>.json`: where a generation's designs carry their task information. */
export const WorkflowInformationRecord = defineRecord({
  kind: 'workflow-information',
  version: 1,
  schema: z.object({
    generation: z.string(),
    tasks: z.array(z.object({ task: z.string(), versions: z.array(z.string()), champion: z.string() })),
    embedding: EmbeddingMethod,
    estimator: z.object({
      name: z.string(),
      units: z.literal('nats'),
      /** The principal components kept of the task embeddings and of each component's. */
      dimensions: z.object({ task: z.number().int(), components: z.record(z.string(), z.number().int()) }),
      /** The share of the embeddings' variance those components keep. */
      explainedVariance: z.object({ task: z.number(), components: z.record(z.string(), z.number()) }),
      permutations: z.number().int().positive(),
      bootstrap: z.number().int().positive(),
      bootstrapPermutations: z.number().int().positive(),
      confidence: z.number(),
      seed: z.number().int(),
    }),
    series: z.array(SeriesInformation),
    /** What the sample cannot say, as the paper states it for its own. */
    limits: z.array(z.string()),
    /** Searches and designs left out, and why. */
    notes: z.array(z.string()),
  }),
});
export type WorkflowInformation = z.infer<(typeof WorkflowInformationRecord)['schema']>;
