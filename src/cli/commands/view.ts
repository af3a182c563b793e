import type { Command } from 'commander';

import { UserError } from '../../errors.js';
import { startViewer } from '../../view/viewer-server.js';

export function registerView(program: Command): void {
  program
    .command('view')
    .description(
      'Browse a run directory in a local web viewer: run, generations, tasks, episodes, comparisons, searches',
    )
    .argument('<run-dir>', 'the run directory, e.g. runs/demo')
    .option('--port <n>', 'the port on 127.0.0.1 (0: any free port)', '8765')
    .action(async (runDirectory: string, options: { port: string }) => {
      const port = Number(options.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new UserError(`--port ${options.port}: give a port number from 0 to 65535.`);
      }
      const viewer = await startViewer({ directory: runDirectory, port });
      console.log(`mass view: ${viewer.url} (127.0.0.1 only; Ctrl-C to stop)`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          void viewer.close().then(resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
