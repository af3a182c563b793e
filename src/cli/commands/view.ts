import { UserError } from '../../errors.js';
import { startViewer } from '../../view/viewer-server.js';

export async function viewAction(runDirectory: string, options: { port: string }): Promise<void> {
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
}
