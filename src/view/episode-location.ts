import { BENCHMARKS_FOLDER } from '../records/benchmark-records.js';
import { evaluationFiles, runFiles } from '../store/run-paths.js';
import { encodePath, isRunName } from './view-paths.js';

/**
 * Where an episode's folder is in the run: `episodes/<id>`, `evaluation/<name>/episodes/<id>` for an evaluation's, or
 * `benchmarks/<benchmark>/episodes/<id>` for a benchmark trial's.
 */
export interface EpisodeLocation {
  id: string;
  /** Relative to the run directory, one name per segment. */
  segments: string[];
}

export function episodeLocation(segments: readonly string[]): EpisodeLocation | undefined {
  if (segments.length === 2 && segments[0] === runFiles.episodes && isRunName(segments[1]!)) {
    return { id: segments[1]!, segments: [...segments] };
  }
  if (
    segments.length === 4 &&
    (segments[0] === runFiles.evaluation || segments[0] === BENCHMARKS_FOLDER) &&
    segments[2] === evaluationFiles.episodes &&
    isRunName(segments[1]!) &&
    isRunName(segments[3]!)
  ) {
    return { id: segments[3]!, segments: [...segments] };
  }
  return undefined;
}

/** An episode from a record's run-relative `dir` (`episodes/L0-task-v1`); undefined when it is not one. */
export function episodeLocationOfDir(dir: string): EpisodeLocation | undefined {
  return episodeLocation(dir.split('/').filter((segment) => segment !== ''));
}

export function episodeUrl(location: EpisodeLocation, ...rest: string[]): string {
  const tail = rest.length > 0 ? encodePath(rest) : '';
  return `/${encodePath(location.segments)}/${tail}`;
}
