import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runMass, startMass } from '../support/cli.js';
import { writeViewerRun } from './synthetic-viewer-run.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-view-cli-'));
  await writeViewerRun(join(root, 'run'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('mass view', () => {
  it('prints its 127.0.0.1 address, serves the run there and stops on SIGTERM', async () => {
    const { child, finished } = startMass(['view', join(root, 'run'), '--port', '0']);
    const url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /http:\/\/127\.0\.0\.1:\d+\//.exec(seen);
        if (match) resolve(match[0]);
      });
      child.on('close', () => reject(new Error(`mass view exited before printing its address: ${seen}`)));
    });
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('href="/generations/L0/demo-potency/"');
    child.kill('SIGTERM');
    expect((await finished).code).toBe(0);
  }, 60_000);

  it('refuses a folder that does not exist and a port that is not one, with advice', async () => {
    const missing = await runMass(['view', join(root, 'nowhere')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('is not a directory: give the run directory');
    const port = await runMass(['view', join(root, 'run'), '--port', 'http']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port http: give a port number from 0 to 65535');
  }, 60_000);
});
