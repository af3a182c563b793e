import { z } from 'zod';

/**
 * `evaluation.searchCoverage`: how soon each generation's workflow searches found a winning design, judged from
 * outside (the paper's Figure 4). Every version a search ran (v0, v1, …) is judged against that search's bare-task
 * reference run by the evaluation's external judges, every judge with every seed in the evaluation's orders; a
 * version wins when every non-failed judgment prefers it. `true` judges the searches of every generation with search
 * records; an object narrows the generations or the seeds. The loop never reads what this writes.
 */
export const SearchCoverageSetting = z.union([
  z.boolean(),
  z
    .object({
      generations: z
        .array(z.string().min(1))
        .min(1)
        .optional()
        .describe(
          'generations whose searches are judged (search/<generation>/); default: every one with search records',
        ),
      judgeSeeds: z
        .number()
        .int()
        .positive()
        .optional()
        .describe("seeds per judge on each version; default: the evaluation's judgeSeeds"),
    })
    .strict(),
]);
export type SearchCoverageSetting = z.infer<typeof SearchCoverageSetting>;

/** The setting in one form: null when off. */
export function searchCoverageSettings(
  setting: SearchCoverageSetting | undefined,
  judgeSeeds: number,
): { generations: string[] | null; judgeSeeds: number } | null {
  if (setting === undefined || setting === false) return null;
  if (setting === true) return { generations: null, judgeSeeds };
  return { generations: setting.generations ?? null, judgeSeeds: setting.judgeSeeds ?? judgeSeeds };
}
