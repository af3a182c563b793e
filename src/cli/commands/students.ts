import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { loadRunConfig, parseRunConfig } from '../../config/run-config.js';
import { DEMO_SUITE } from '../../demo/demo-config.js';
import { UserError } from '../../errors.js';
import { episodeBackendFor } from '../../queue/backend-from-config.js';
import { parseStudentSpecs } from '../../students/student-datasets.js';
import { formatStudents } from '../../records/students-table.js';
import { runStudents } from '../../students/students.js';
import { STUDENTS_FOLDER } from '../../store/run-paths.js';
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

export async function studentsAction(runDirectory: string | undefined, flags: StudentsFlags): Promise<void> {
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
