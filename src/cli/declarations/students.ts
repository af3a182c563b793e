import type { Command } from 'commander';

import { DEFAULT_LENGTH_RATIO } from '../../students/length-ratio.js';
import { lazyAction } from './lazy-action.js';

export function declareStudents(program: Command): void {
  program
    .command('students')
    .description(
      'The paper’s Figure 6: the round’s team outputs judged against its single-agent outputs of the same task and seed (all pairs and length-matched ones); students trained from the same base on single-agent (S), multi-agent (M) and mixed (X) selected episodes of the round, each judged against the base, with their processed supervised tokens from the sampler. Written to students/<name>/ in the run; needs distill.singleAgentCollection for the judging and for S and X',
    )
    .argument(
      '[run-dir]',
      'the run directory (e.g. runs/demo); or give the run’s configuration with --config',
    )
    .option(
      '--config <file>',
      'the run’s configuration: the run is <runs>/<its name>/, its suite read from the file’s folder',
    )
    .option('--runs <dir>', 'with --config: the folder holding run directories', 'runs')
    .option(
      '--students <list>',
      'the students and their episodes, e.g. S2,M2,X2 (none: only the team against the single agent is judged)',
    )
    .option(
      '--length-ratio <r>',
      'pairs whose output tokens are within this ratio of each other are length-matched',
      String(DEFAULT_LENGTH_RATIO),
    )
    .option('--generation <name>', 'the round whose selected episodes are the data', 'L0')
    .option('--name <name>', 'the experiment: students/<name>/ in the run', 'default')
    .option('--batch-size <n>', 'windows per training step', '4')
    .option(
      '--epochs <n>',
      'passes over a student’s windows: its steps are ceil(epochs × windows / batch size)',
      '1',
    )
    .option('--seed <n>', 'the seed of the sampler and the trainer', '0')
    .option('--rollouts <n>', 'evaluation episodes per task and student', '2')
    .option(
      '--tasks <ids>',
      'evaluation tasks, comma-separated (default: the run’s evaluation section’s, else its suite’s test split)',
    )
    .option('--suite <dir>', 'the run’s suite folder (default: its configuration’s suite, from here)')
    .option('--json', 'print the record as JSON')
    .action(lazyAction(async () => (await import('../commands/students.js')).studentsAction));
}
