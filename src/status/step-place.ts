/**
 * Where a step of the run belongs, read from its key alone: the stage, the generation, the group of steps it is
 * counted in (the prefix a stage's plan names, see `work-plan.ts`) and its kind (`episode`, `judge`, `match`…).
 *
 * - `search/<generation>/<task>/<version>/<kind>` and `search/<generation>/<task>/result`
 * - `distill/<generation>/<task>/<kind>[/<n>]` and `distill/<generation>/dataset`
 * - `rsi/<generation>/train` (the training that makes `<generation>`)
 * - `evaluation/<name>/<kind>/…`
 * - any other `<stage>/<name>/<kind>/…`
 */
export interface StepPlace {
  stage: string;
  /** The generation the stage works for; null for an evaluation and other stages outside the generations. */
  generation: string | null;
  /** The group's key prefix, e.g. `search/L0/demo-potency`. */
  group: string;
  /** The task the group is about, or what names it otherwise (`dataset`, an evaluation's name); null for training. */
  label: string | null;
  kind: string;
}

/** The kinds of step that are one call of a judge or of the optimizer, not an episode. */
export const MODEL_CALL_KINDS: ReadonlySet<string> = new Set([
  'judge',
  'match',
  'judgment',
  'proposal',
  'tournament',
  'search-coverage',
]);

export function placeOfStep(key: string): StepPlace {
  const segments = key.split('/');
  const [stage = key, second = '', third] = segments;
  const prefix = (count: number) => segments.slice(0, count).join('/');
  if (stage === 'search' && segments.length >= 4) {
    return { stage, generation: second, group: prefix(3), label: third!, kind: segments.at(-1)! };
  }
  if (stage === 'distill' && segments.length >= 3) {
    const kind = segments[3] ?? third!;
    return { stage, generation: second, group: prefix(3), label: third!, kind };
  }
  if (stage === 'rsi' && segments.length >= 3) {
    return { stage: 'train', generation: second, group: prefix(2), label: null, kind: third! };
  }
  if (stage === 'evaluation') {
    return { stage, generation: null, group: prefix(2), label: second, kind: third ?? second };
  }
  return {
    stage,
    generation: null,
    group: prefix(Math.min(2, segments.length)),
    label: second || null,
    kind: third ?? second ?? stage,
  };
}

/** The order stages run in within a generation, for "the stage each generation is in". */
export const GENERATION_STAGES = ['train', 'search', 'distill'] as const;
