import { Command, CommanderError } from 'commander';

import { MassError } from '../errors.js';
import { commands } from './commands/index.js';

/** The program with the command `argv` names, or every command (for help, or a name it does not know). */
export async function buildProgram(argv: string[]): Promise<Command> {
  const program = new Command('mass')
    .description(
      'MASS: one model as agent team, judge and workflow optimizer, fine-tuned on its own best team runs',
    )
    .showHelpAfterError()
    .exitOverride();
  const named = argv[2];
  const loaders =
    named !== undefined && Object.hasOwn(commands, named) ? [commands[named]!] : Object.values(commands);
  for (const register of await Promise.all(loaders.map((load) => load()))) register(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = await buildProgram(argv);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    if (error instanceof MassError) {
      console.error(`mass: ${error.message}`);
      process.exitCode = error.exitCode;
      return;
    }
    throw error;
  }
}
