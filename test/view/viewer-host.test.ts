import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startViewer, type RunningViewer } from '../../src/view/viewer-server.js';
import { writeViewerRun } from './synthetic-viewer-run.js';

let root: string;
let viewer: RunningViewer;
let port: number;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-view-host-'));
  await writeViewerRun(join(root, 'run'));
  viewer = await startViewer({ directory: join(root, 'run'), port: 0 });
  port = Number(new URL(viewer.url).port);
});
afterAll(async () => {
  await viewer.close();
  await rm(root, { recursive: true, force: true });
});

/** Sends one request as written, so the Host header is exactly what a rebound browser or a test chooses. */
function send(head: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head}\r\nConnection: close\r\n\r\n`));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1]), body: text }));
  });
}

describe('mass view: the Host header', () => {
  it('answers the loopback names with its own port', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`, `[::1]:${port}`]) {
      const answer = await send(`GET / HTTP/1.1\r\nHost: ${host}`);
      expect(answer.status, host).toBe(200);
      expect(answer.body).toContain('href="/generations/L0/demo-potency/"');
    }
  });

  it('refuses any other host, as a page rebound to 127.0.0.1 would send, and a request without one', async () => {
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1:${port + 1}`,
      'localhost',
      `127.0.0.1.:${port}`,
    ]) {
      const answer = await send(`GET /episodes/ HTTP/1.1\r\nHost: ${host}`);
      expect(answer.status, host).toBe(421);
      expect(answer.body).not.toContain('L0-demo-potency');
    }
    expect((await send('GET / HTTP/1.0')).status).toBe(421);
  });
});
