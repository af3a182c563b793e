import { z } from 'zod';

import { FaultPlan } from './fault-plan.js';

/**
 * What the model of the run is, named once: what serves each generation, trains the next and tokenises its data
 * follows from it (`src/hosting/model-kind.ts`).
 */
export const ModelSetting = z
  .discriminatedUnion('kind', [
    z
      .object({ kind: z.literal('served') })
      .strict()
      .describe(
        'a model you serve (vLLM or any OpenAI-compatible server, at roles.executor.baseUrl): trained by rsi.trainer, each trained generation deployed by rsi.deploy',
      ),
    z
      .object({
        kind: z.literal('toy'),
        faults: FaultPlan.optional().describe(
          'faults the toy model injects into a share of its answers (every role: one server), e.g. { rate: 0.1, kinds: [503, 429, reset, hang] }',
        ),
      })
      .strict()
      .describe(
        'the built-in rule-based toy model (no GPU, no weights): mass serves it in its own process and trains it itself (the demo)',
      ),
  ])
  .default({ kind: 'served' });
export type ModelSetting = z.output<typeof ModelSetting>;
