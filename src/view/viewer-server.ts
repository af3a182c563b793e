import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';

import { UserError } from '../errors.js';
import { isViewerHost } from './host-check.js';
import { respond } from './respond.js';

interface ViewerOptions {
  /** The run directory to show. */
  directory: string;
  /** 0 picks a free port. */
  port: number;
}

export interface RunningViewer {
  url: string;
  close(): Promise<void>;
}

/** Serves the viewer on 127.0.0.1 only: the run may hold an agent's files, and nothing here is meant for a network. */
export async function startViewer(options: ViewerOptions): Promise<RunningViewer> {
  const root = resolve(options.directory);
  const stats = await stat(root).catch(() => undefined);
  if (!stats?.isDirectory()) {
    throw new UserError(`${root} is not a directory: give the run directory (e.g. runs/demo).`);
  }
  let port = 0;
  const server = createServer((request, response) => {
    if (!isViewerHost(request.headers.host, port)) {
      // 421 Misdirected Request: this server does not answer for that name (see host-check.ts).
      response.writeHead(421, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
      response.end(`The viewer answers only at http://127.0.0.1:${port}/ or http://localhost:${port}/.\n`);
      return;
    }
    void respond(root, request.method ?? 'GET', request.url ?? '/').then(
      (answer) => {
        response.writeHead(answer.status, answer.headers);
        response.end(request.method === 'HEAD' ? undefined : answer.body);
      },
      (error: unknown) => {
        response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        response.end(String(error));
      },
    );
  });
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new UserError(`port ${options.port} on 127.0.0.1 is in use: choose another with --port.`)
          : error,
      ),
    );
    server.listen(options.port, '127.0.0.1', () => resolvePromise());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolvePromise) => {
        server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}
