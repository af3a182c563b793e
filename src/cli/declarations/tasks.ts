import type { Command } from 'commander';

import { TASK_MANIFEST_SCHEMA_FILE } from '../../tasks/manifest-schema-file.js';
import { lazyAction } from './lazy-action.js';

export function declareTasks(program: Command): void {
  const tasks = program
    .command('tasks')
    .description('Research tasks: list, inspect and validate suites, build workspaces, grade finished ones');

  tasks
    .command('list')
    .description('List the tasks of a suite')
    .argument('<suite>', 'suite folder, e.g. suites/research-12')
    .option('--json', 'print JSON')
    .action(lazyAction(async () => (await import('../commands/tasks.js')).tasksListAction));

  tasks
    .command('show')
    .description('Show one task: deliverables, inputs, protected files, judge and initial workflow')
    .argument('<task>', 'task folder (holding task.yaml)')
    .option('--prompt', 'print only the task prompt exactly as the team sees it')
    .option('--json', 'print the validated manifest and resolved judge as JSON')
    .action(lazyAction(async () => (await import('../commands/tasks.js')).tasksShowAction));

  tasks
    .command('validate')
    .description('Validate a task folder or every task of a suite; exits with 2 if any is invalid')
    .argument('<dir>', 'suite folder or task folder')
    .option('--generators', 'also run every generator twice with one seed: it must be deterministic')
    .option('--seed <n>', 'seed for --generators', '1')
    .option(
      '--images',
      'the served model reads images: designs and task texts may ask to look at plots (without it, such requests are problems)',
    )
    .option('--config <file>', "a run configuration: --images when its executor's endpoint sets images: true")
    .action(lazyAction(async () => (await import('../commands/tasks.js')).tasksValidateAction));

  tasks
    .command('materialize')
    .description(
      "Create a task's starting workspace for a data seed (input files and generated data; never the oracle)",
    )
    .argument('<task>', 'task folder')
    .argument('<workspace>', 'new or empty folder')
    .requiredOption('--seed <n>', 'the data seed of the generated data (grading needs the same seed)')
    .option('--json', 'print JSON')
    .action(lazyAction(async () => (await import('../commands/tasks.js')).tasksMaterializeAction));

  tasks
    .command('grade')
    .description(
      "Grade a finished workspace with the task's withheld grader (outside measure; never shown to any role)",
    )
    .argument('<task>', 'task folder')
    .argument('<workspace>', 'workspace folder')
    .requiredOption(
      '--seed <n>',
      "the data seed the workspace was materialised with (an episode's: dataSeed in its episode.json)",
    )
    .option('--json', 'print the grade as JSON')
    .option(
      '--no-rerun',
      "do not rerun the task's entry point (the grader's reproducibility part then scores 0)",
    )
    .option(
      '--no-sandbox',
      "rerun the entry point without bubblewrap (nothing isolates the team's code: only for machines that cannot have it)",
    )
    .action(lazyAction(async () => (await import('../commands/tasks.js')).tasksGradeAction));

  tasks
    .command('import-official')
    .description(
      'Build a suite from a checkout of the official MASS repository: its bare queries, free-text initial teams, splits and teacher directive (network allowed for the hosts each task names; no graders)',
    )
    .argument('<checkout>', 'the root of a checkout of the official repository (holding tasks/splits.json)')
    .requiredOption('--out <dir>', 'a new or empty folder for the suite')
    .option('--json', 'print JSON')
    .action(lazyAction(async () => (await import('../commands/tasks.js')).tasksImportOfficialAction));

  tasks
    .command('schema')
    .description(
      `Print the JSON Schema of task.yaml, or write it (the committed copy is suites/${TASK_MANIFEST_SCHEMA_FILE})`,
    )
    .option('--write <file>', 'write the schema to this file instead of printing it')
    .action(lazyAction(async () => (await import('../commands/tasks.js')).tasksSchemaAction));
}
