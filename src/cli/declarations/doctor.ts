import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check every model server of a run configuration: the model served and its context, tool calls structured, reasoning apart from the content, usage in streams, the seed, runtime LoRA routes and throughput; each failure names the server flag that fixes it',
    )
    .requiredOption('--config <file>', 'the run configuration (YAML; schema: `mass config schema`)')
    .option('--json', 'print the report as JSON')
    .option('--timeout <seconds>', 'time limit of each probe request', '120')
    .option(
      '--check-generation <name>',
      "only the deployment check of a registered generation (e.g. L1): the trainer's probe against what every replica of the executor serves now, its figures printed; exits 2 on a mismatch",
    )
    .option(
      '--runs <dir>',
      'the folder holding run directories; the run is <dir>/<name>/ (--check-generation reads it; the throughput record goes there)',
      'runs',
    )
    .option(
      '--record <file>',
      'where to write the measured throughput for `mass plan` (default <runs>/<name>/doctor-throughput.json)',
    )
    .action(lazyAction(async () => (await import('../commands/doctor.js')).doctorAction));
}
