import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { z } from 'zod';

import { systemErrorCode } from './system-error-code.js';

/**
 * What a stage plans before it starts its work, for `mass status` to count against: `work-plan.jsonl` in the run
 * directory, one line each time a stage plans (or re-plans, as a tournament does per round). A line names a step
 * group (a prefix of step keys: `search/L0/demo-potency`, `evaluation/demo`) and, per kind of step in it (`episode`,
 * `judge`, `match`…), how many it plans. Later lines for the same group and kind replace earlier ones, so a resumed
 * command that plans again says the same. Runs from before it have no such file: their counts say only what was done.
 */
export const WORK_PLAN_FILE = 'work-plan.jsonl';

export const WorkPlanEntry = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('work-plan'),
  at: z.string(),
  /** A prefix of step keys: every step of the group is `<group>/…`. */
  group: z.string().min(1),
  /** Per kind of step of the group, how many are planned. */
  planned: z.record(z.string(), z.number().int().nonnegative()),
  /**
   * Episodes the group runs that are not steps of their own (a collection's champion runs): the finished episode
   * folders whose name starts with `idPrefix` in the run's `folder` count as done.
   */
  episodes: z
    .object({ folder: z.string(), idPrefix: z.string().min(1), planned: z.number().int().nonnegative() })
    .optional(),
});
export type WorkPlanEntry = z.infer<typeof WorkPlanEntry>;

/** Appends a plan line to the run's `work-plan.jsonl`: one small write where a stage plans its work. */
export async function recordWorkPlan(
  runDirectory: string,
  group: string,
  planned: Record<string, number>,
  episodes?: WorkPlanEntry['episodes'],
): Promise<void> {
  const entry: WorkPlanEntry = {
    schemaVersion: 1,
    kind: 'work-plan',
    at: new Date().toISOString(),
    group,
    planned,
    ...(episodes === undefined ? {} : { episodes }),
  };
  const path = join(runDirectory, WORK_PLAN_FILE);
  await mkdir(dirname(path), { recursive: true });
  await appendFile(path, `${JSON.stringify(entry)}\n`);
}

/**
 * Every group's plan, later lines over earlier ones kind by kind. A line that does not parse (torn by a kill, or from
 * a newer mass) is skipped: the plan is what `mass status` counts against, never a fact the loop relies on.
 */
export async function readWorkPlans(runDirectory: string): Promise<Map<string, WorkPlanEntry>> {
  let text: string;
  try {
    text = await readFile(join(runDirectory, WORK_PLAN_FILE), 'utf8');
  } catch (error) {
    if (systemErrorCode(error) === 'ENOENT') return new Map();
    throw error;
  }
  const plans = new Map<string, WorkPlanEntry>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let parsed;
    try {
      parsed = WorkPlanEntry.safeParse(JSON.parse(line));
    } catch {
      continue;
    }
    if (!parsed.success) continue;
    const entry = parsed.data;
    const earlier = plans.get(entry.group);
    plans.set(entry.group, {
      ...entry,
      planned: { ...earlier?.planned, ...entry.planned },
      ...((entry.episodes ?? earlier?.episodes) === undefined
        ? {}
        : { episodes: entry.episodes ?? earlier?.episodes }),
    });
  }
  return plans;
}
