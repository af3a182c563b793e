import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import type { Command } from 'commander';

import { loadRunConfig, parseRunConfig } from '../../config/run-config.js';
import { DEMO_SUITE } from '../../demo/demo-config.js';
import { UserError } from '../../errors.js';
import { episodeBackendFor } from '../../queue/backend-from-config.js';
import { parseStudentSpecs } from '../../students/student-datasets.js';
import { formatStudents } from '../../students/students-table.js';
import { runStudents, STUDENTS_FOLDER } from '../../students/students.js';
import { DEFAULT_LENGTH_RATIO } from '../../students/team-versus-single.js';
import { parsePositiveInteger } from '../duration.js';

function atLeastOne(text: string, flag: string): number {
  const value = parsePositiveInteger(text, flag);
  if (value < 1) throw new UserError(`${flag} "${text}": use at least 1`);
  return value;
}

interface StudentsFlags {
  students?: string;
  lengthRatio: string;
  generation: string;
  name: string;
  batchSize: string;
  epochs: string;
  seed: string;
  rollouts: string;
  tasks?: string;
  suite?: string;
  config?: string;
  runs: string;
  json?: boolean;
}

export function registerStudents(program: Command): void {
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
    .action(async (runDirectory: string | undefined, flags: StudentsFlags) => {
      const { directory, suite } = await runAndSuite(runDirectory, flags);
      const epochs = Number(flags.epochs);
      if (!(epochs > 0) || !Number.isFinite(epochs))
        throw new UserError(`--epochs "${flags.epochs}": use a positive number`);
      const lengthRatio = Number(flags.lengthRatio);
      if (!(lengthRatio >= 1) || !Number.isFinite(lengthRatio))
        throw new UserError(`--length-ratio "${flags.lengthRatio}": use a number of at least 1`);
      const record = await runStudents({
        runDirectory: directory,
        generation: flags.generation,
        name: flags.name,
        students: flags.students === undefined ? [] : parseStudentSpecs(flags.students),
        lengthRatio,
        training: {
          batchSize: atLeastOne(flags.batchSize, '--batch-size'),
          epochs,
          seed: parsePositiveInteger(flags.seed, '--seed'),
        },
        rollouts: atLeastOne(flags.rollouts, '--rollouts'),
        tasks: flags.tasks
          ?.split(',')
          .map((task) => task.trim())
          .filter(Boolean),
        suiteDir: (config) => suite ?? suiteFolder(flags.suite, config.suite),
        backend: (config) => episodeBackendFor(config, directory),
        onProgress: flags.json ? undefined : (line) => console.error(`mass students: ${line}`),
      });
      if (flags.json) console.log(JSON.stringify({ schemaVersion: 1, kind: 'students', ...record }, null, 2));
      else console.log(formatStudents(record));
      console.error(
        `mass students: written to ${STUDENTS_FOLDER}/${flags.name}/students.json in ${directory}; mass report draws it`,
      );
    });
}

/** The run directory, given or from the configuration's name, and the suite its configuration file names. */
async function runAndSuite(
  runDirectory: string | undefined,
  flags: StudentsFlags,
): Promise<{ directory: string; suite?: string }> {
  if (flags.config === undefined) {
    if (runDirectory === undefined) {
      throw new UserError(
        'mass students: give the run directory, or the run’s configuration with --config <file>',
      );
    }
    return { directory: resolve(runDirectory) };
  }
  if (runDirectory !== undefined) {
    throw new UserError('mass students: give the run directory or --config <file>, not both');
  }
  const config = parseRunConfig(await loadRunConfig(flags.config), flags.config);
  return {
    directory: resolve(flags.runs, config.name),
    suite:
      flags.suite === undefined
        ? resolve(dirname(resolve(flags.config)), config.suite)
        : resolve(flags.suite),
  };
}

/** The suite named on the command line, else the configuration's from here, else the demo's for the demo's run. */
function suiteFolder(flag: string | undefined, configured: string): string {
  if (flag !== undefined) return resolve(flag);
  const here = resolve(configured);
  if (existsSync(here)) return here;
  if (configured === 'suites/demo') return DEMO_SUITE;
  throw new UserError(`the run's suite ${configured} is not found from here: give it with --suite <dir>`);
}
