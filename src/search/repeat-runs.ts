/**
 * What a rerun of an unchanged design is called and how it is seeded (`search.repeats`; docs/search.md, "Search
 * noise: Figure 8"). Every episode of the search samples with the run's `seed`, so that the designs are what differs
 * between them; rerun `i` (1 … k) of every design samples with `seed + i` instead. The k reruns of all designs are
 * thus k more searches' worth of runs, each sharing one seed across designs as the search's own runs do, and none
 * shares a seed with the search. Run 0 is the search's own run of the design.
 */

/** The label of run `index` of `design` (`reference`, `v3`): the design itself for 0, else `v3-r2`. */
export function repeatRunLabel(design: string, index: number): string {
  assertRunIndex(index);
  return index === 0 ? design : `${design}-r${index}`;
}

/** The sampling seed of run `index` of any design. */
export function repeatSeed(seed: number, index: number): number {
  assertRunIndex(index);
  return seed + index;
}

/** The prefix of the step keys of rerun `index` of `design`, under the task's base: `<base>/repeats/v3/2`. */
export function repeatStepBase(taskBase: string, design: string, index: number): string {
  assertRunIndex(index);
  return `${taskBase}/repeats/${design}/${index}`;
}

function assertRunIndex(index: number): void {
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new RangeError(`a design's runs are numbered 0 (the search's own), 1, 2 …, not ${index}`);
  }
}
