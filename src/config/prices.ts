import { z } from 'zod';

const PerMillion = z.number().nonnegative().finite();

/**
 * What an endpoint's tokens cost, in US dollars per million tokens: input (prompt), cached input (prompt tokens the
 * provider served from its cache; default the input price) and output (completion, reasoning included). Used when
 * the provider does not report a call's cost itself (OpenRouter's `usage.cost` is used as reported).
 */
export const Prices = z
  .object({
    input: PerMillion.describe('US dollars per million input (prompt) tokens'),
    cachedInput: PerMillion.optional().describe(
      'US dollars per million cached input tokens; default: the input price',
    ),
    output: PerMillion.describe('US dollars per million output (completion) tokens, reasoning included'),
  })
  .strict();
export type Prices = z.infer<typeof Prices>;

/** The stages spending is recorded under: the commands that spend on model calls. */
export const SPEND_STAGES = ['search', 'distill', 'evaluation', 'benchmark', 'students'] as const;
export type SpendStage = (typeof SPEND_STAGES)[number];

/**
 * The stages whose work is checked against the budgets before it starts, every stage that spends: the search's
 * episodes, judgments and optimizer proposals (`mass search`, and each generation's in `mass rsi`); the
 * distillation's collection episodes and tournament judgments (`mass distill`, and each generation's in `mass rsi`);
 * `mass eval`'s episodes and judgments; `mass benchmark`'s trials of a model; `mass students`' judgments of the team
 * against the single agent and its evaluation's episodes and judgments. A stage not listed here would be refused by
 * the configuration: a budget that could never stop anything.
 */
export const BUDGETED_STAGES = SPEND_STAGES;

function spendLimits(unit: string, example: string) {
  const limit = z.number().positive().finite();
  return z
    .object({
      run: limit.optional().describe(`the whole run's ${unit}, as its spending journal holds them`),
      roles: z
        .object({ executor: limit.optional(), judge: limit.optional(), optimizer: limit.optional() })
        .strict()
        .optional()
        .describe(`${unit} per role, over the whole run`),
      stages: z
        .object(
          Object.fromEntries(BUDGETED_STAGES.map((stage) => [stage, limit.optional()])) as Record<
            (typeof BUDGETED_STAGES)[number],
            z.ZodOptional<typeof limit>
          >,
        )
        .strict()
        .optional()
        .describe(
          `${unit} per stage (${BUDGETED_STAGES.join(', ')}), over all its generations, evaluations or benchmarks`,
        ),
    })
    .strict()
    .optional()
    .describe(`limits on ${unit}; work that would start past one is not started (exit 3), e.g. ${example}`);
}

/** `budgets.cost`: US dollars, summed from the calls' reported or computed costs. */
export const CostLimits = spendLimits('US dollars', '{ run: 40, roles: { judge: 10 } }');
/** `budgets.tokens`: input plus output tokens of the calls. */
export const TokenLimits = spendLimits('tokens (input plus output)', '{ stages: { evaluation: 5000000 } }');
export type SpendLimits = NonNullable<z.infer<typeof CostLimits>>;
