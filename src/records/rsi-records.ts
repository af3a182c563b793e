import { z } from 'zod';

import { defineRecord } from '../store/record.js';
import { TrainingMetrics } from './training-metrics.js';

export const GenerationSummary = z.object({
  generation: z.string(),
  servedAs: z.string(),
  tasks: z.array(z.object({ task: z.string(), champion: z.string(), beatsReference: z.boolean() })),
  /** Null when no search beat its reference: nothing to train on, the loop stops. */
  dataset: z
    .object({
      dir: z.string(),
      trainEpisodes: z.number().int(),
      validationEpisodes: z.number().int(),
      trainWindows: z.number().int(),
      supervisedTokens: z.number().int(),
    })
    .nullable(),
  trained: z.object({ generation: z.string(), servedAs: z.string(), metrics: TrainingMetrics }).nullable(),
});
export type GenerationSummary = z.infer<typeof GenerationSummary>;

/** `rsi-summary.json`: what each generation did and the registry of generations at the end. */
export const RsiSummaryRecord = defineRecord({
  kind: 'rsi-summary',
  version: 1,
  schema: z.object({
    run: z.string(),
    rounds: z.number().int(),
    generations: z.array(GenerationSummary),
    registry: z.array(
      z.object({
        name: z.string(),
        parent: z.string().nullable(),
        servedAs: z.string(),
        datasetId: z.string().nullable(),
      }),
    ),
  }),
});
export type RsiSummary = z.infer<(typeof RsiSummaryRecord)['schema']>;
