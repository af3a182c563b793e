import { Command, CommanderError } from 'commander';

import { MassError } from '../errors.js';
import { declareCommands } from './declarations/index.js';

/** The `mass` program with every command declared; a command's own modules load only when it runs. */
export function buildProgram(): Command {
  const program = new Command('mass')
    .description(
      'MASS: one model as agent team, judge and workflow optimizer, fine-tuned on its own best team runs',
    )
    .showHelpAfterError()
    .exitOverride();
  declareCommands(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
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
