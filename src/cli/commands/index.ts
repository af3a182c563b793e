import type { Command } from 'commander';

/** Every `mass` subcommand registers itself here; one file per command in this folder. */
export const commands: Array<(program: Command) => void> = [];
