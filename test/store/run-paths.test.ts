import { describe, expect, it } from 'vitest';

import {
  datasetPath,
  distillTaskPath,
  episodeFiles,
  episodePath,
  evaluationPath,
  outerLoopFiles,
  runEpisodePath,
  runFiles,
  searchResultPath,
  searchVersionPath,
} from '../../src/store/run-paths.js';
import { runFileNames } from '../../src/store/run-store.js';

describe('run directory paths', () => {
  it('names the files of an episode directory', () => {
    expect(episodePath('/runs/r/episodes/e1', 'record')).toBe('/runs/r/episodes/e1/episode.json');
    expect(episodePath('episodes/e1', 'workspace', 'results/metrics.json')).toBe(
      'episodes/e1/workspace/results/metrics.json',
    );
    expect(new Set(Object.values(episodeFiles)).size).toBe(Object.values(episodeFiles).length);
  });

  it('builds the run-relative paths of searches, outer loops, datasets and evaluations', () => {
    expect(runEpisodePath('L0-t-v1')).toBe('episodes/L0-t-v1');
    expect(searchResultPath('L0', 'task')).toBe('search/L0/task/result.json');
    expect(searchVersionPath('L0', 'task', 'v2', 'judgments')).toBe('search/L0/task/v2/judgments');
    expect(distillTaskPath('L1', 'task', outerLoopFiles.selection)).toBe('distill/L1/task/selection.json');
    expect(datasetPath('L1', 'stats.json')).toBe('distill/L1/dataset/stats.json');
    expect(evaluationPath('final')).toBe('evaluation/final');
    expect(evaluationPath('final', 'grades')).toBe('evaluation/final/grades.jsonl');
    expect(runFiles.registry).toBe('train/registry.json');
  });

  it('is where the run store takes its own file names from', () => {
    expect(runFileNames).toEqual({
      config: runFiles.config,
      database: runFiles.database,
      lock: runFiles.lock,
    });
  });
});
