import type { EpisodeLocation } from '../episode-location.js';
import { encodePath } from '../view-paths.js';

export type Crumbs = Array<[string, string]>;

export function runCrumbs(): Crumbs {
  return [['run', '/']];
}

export function generationCrumbs(generation: string): Crumbs {
  return [...runCrumbs(), [`generation ${generation}`, `/generations/${encodePath([generation])}/`]];
}

export function taskCrumbs(generation: string, task: string): Crumbs {
  return [
    ...generationCrumbs(generation),
    [`task ${task}`, `/generations/${encodePath([generation, task])}/`],
  ];
}

export function episodeCrumbs(location: EpisodeLocation, task?: string): Crumbs {
  const list: Crumbs =
    location.segments[0] === 'evaluation' || location.segments[0] === 'benchmarks'
      ? [
          ...runCrumbs(),
          [
            `${location.segments[0] === 'evaluation' ? 'evaluation' : 'benchmark'} ${location.segments[1]!}`,
            `/${location.segments[0]}/${encodePath([location.segments[1]!])}/`,
          ],
        ]
      : [...runCrumbs(), ['episodes', '/episodes/']];
  return [...list, [task ? `${location.id} (${task})` : location.id, '']];
}
