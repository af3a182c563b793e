import path from 'node:path';

import type { HarborTask } from './harbor-task.js';
import type { LoadedTask } from './load-task.js';

/** What the judge is told of a benchmark task (benchmarks are scored by their verifiers; a judge is rarely asked). */
const BENCHMARK_JUDGE = {
  persona: 'a careful reviewer of software and data analyses',
  lens: 'look first for whether the instruction was done as asked and whether the result can be reproduced',
  focus: null,
};

/**
 * A Harbor task as the episode runs it: its instruction is the whole task text, the agent starts with the files of
 * its `environment/` (a container's own files left out), and its `tests/` and `solution/` are withheld, never copied
 * into a workspace nor shown in a sandbox. It has no deliverables of mass's kinds, no grader and no team design of its
 * own: the benchmark runs it bare, and its verifier scores it.
 */
export function harborLoadedTask(harbor: HarborTask): LoadedTask {
  return {
    dir: harbor.dir,
    manifestPath: harbor.tomlPath,
    manifest: {
      schemaVersion: 1,
      id: harbor.name,
      title: typeof harbor.metadata['title'] === 'string' ? harbor.metadata['title'] : harbor.name,
      domain: 'benchmark',
      split: 'test',
      prompt: { file: 'instruction.md' },
      deliverables: [],
      inputs: {
        files: harbor.environmentFiles.map((file) => ({ from: path.join('environment', file), to: file })),
      },
      protected: [],
      judge: {},
      workflow: { schemaVersion: 1, text: 'None: a benchmark task runs bare.' },
      environment: {
        runtime: 'python3',
        packages: ['numpy', 'pandas', 'matplotlib', 'scipy', 'scikit-learn'],
        network: false,
      },
    },
    prompt: harbor.instruction,
    judge: BENCHMARK_JUDGE,
    withheldDirs: ['tests', 'solution'].map((folder) => path.join(harbor.dir, folder)),
    teacherDirective: null,
    harbor,
  };
}
