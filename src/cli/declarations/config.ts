import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareConfig(program: Command): void {
  const config = program.command('config').description('The run configuration file (`mass search --config`)');
  config
    .command('schema')
    .description('Print the JSON Schema of the configuration file, for editors ($schema) and validators')
    .option('--out <file>', 'write it to this file instead')
    .action(lazyAction(async () => (await import('../commands/config.js')).configSchemaAction));
  config
    .command('check')
    .description('Validate a configuration file and print it with every default filled in')
    .argument('<file>', 'the YAML configuration')
    .action(lazyAction(async () => (await import('../commands/config.js')).configCheckAction));
}
