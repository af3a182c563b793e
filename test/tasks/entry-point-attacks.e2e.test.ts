import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sandboxedEntryPointRunner } from '../../src/episode/entry-point-sandbox.js';
import { removeTree } from '../../src/store/remove-tree.js';

/**
 * The entry point rerun at grading time is the team's code: it attacks what runs it. Each case runs one `run.py` in
 * the rerun's bubblewrap sandbox, as grading does.
 */
const ATTACK = String.raw`
import json, os, socket, subprocess, sys, time
found = {"environment": dict(os.environ)}
# A tree nested past PATH_MAX, in the home (the sandbox's state) and in the workspace.
for top in (os.environ["HOME"], "."):
    os.chdir(top)
    for _ in range(30):
        os.mkdir("d" * 200)
        os.chdir("d" * 200)
    os.chdir("/workspace")
# The host's loopback server, by TCP.
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    found["loopback"] = "reached"
except OSError as error:
    found["loopback"] = type(error).__name__
json.dump(found, open("found.json", "w"))
# A daemon in a session of its own that goes on writing after the rerun has ended.
subprocess.Popen(["python3", "-c", "import time\nwhile True:\n    open('/workspace/late.txt', 'a').write('x')\n    time.sleep(0.05)"], start_new_session=True)
time.sleep(0.3)
`;

describe('the rerun of an entry point, as its code attacks', () => {
  let folder: string;
  let server: Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'mass-rerun-attack-'));
    server = createServer((socket) => {
      connections++;
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    server.close();
    await removeTree(folder);
  });

  it('reaches no network, sees none of this process environment, leaves no process and a deep tree breaks nothing', async () => {
    writeFileSync(join(folder, 'run.py'), ATTACK);
    process.env.MASS_TEST_SECRET_KEY = 'sk-the-host-secret';
    const before = new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('mass-rerun-')));
    let outcome;
    try {
      outcome = await sandboxedEntryPointRunner({ mode: 'bubblewrap' })({
        folder,
        command: `python3 run.py ${port}`,
        timeoutSeconds: 60,
        hiddenDirectories: [],
      });
    } finally {
      delete process.env.MASS_TEST_SECRET_KEY;
    }
    expect(outcome).toEqual({ ok: true, reason: '' });
    const found = JSON.parse(readFileSync(join(folder, 'found.json'), 'utf8')) as {
      environment: Record<string, string>;
      loopback: string;
    };
    expect(found.loopback).not.toBe('reached');
    expect(connections).toBe(0);
    expect(JSON.stringify(found.environment)).not.toContain('sk-the-host-secret');
    expect(Object.keys(found.environment).filter((name) => /KEY|TOKEN|NODE_OPTIONS/.test(name))).toEqual([]);
    // The daemon died with the sandbox: nothing is written after the rerun returned.
    const late = () =>
      existsSync(join(folder, 'late.txt')) ? readFileSync(join(folder, 'late.txt')).length : 0;
    const atEnd = late();
    await sleep(500);
    expect(late()).toBe(atEnd);
    // The rerun's own state (its home, with the deep tree) is gone.
    const left = readdirSync(tmpdir()).filter((name) => name.startsWith('mass-rerun-') && !before.has(name));
    expect(left.filter((name) => name !== folder.split('/').pop())).toEqual([]);
    rmSync(join(folder, 'run.py'));
  }, 120_000);
});
