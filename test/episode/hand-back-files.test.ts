import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { handBackFiles } from '../../src/episode/hand-back-files.js';
import { temporaryDirectory } from '../support/fixtures.js';

describe('handing files back from a trial', () => {
  const directory = temporaryDirectory();
  const servers: Server[] = [];
  afterAll(() => {
    for (const server of servers) server.close();
    directory.remove();
  });
  let count = 0;
  const fresh = () => {
    const root = join(directory.path, `case-${count++}`);
    mkdirSync(join(root, 'source'), { recursive: true });
    return { source: join(root, 'source'), destination: join(root, 'back'), root };
  };

  it('clears set-user-ID, set-group-ID and sticky bits of files and folders, keeping the rest of the mode', async () => {
    const { source, destination } = fresh();
    writeFileSync(join(source, 'bash'), '#!/bin/sh\n');
    chmodSync(join(source, 'bash'), 0o4755);
    writeFileSync(join(source, 'tool'), 'x');
    chmodSync(join(source, 'tool'), 0o2750);
    mkdirSync(join(source, 'shared'));
    chmodSync(join(source, 'shared'), 0o3775);
    writeFileSync(join(source, 'shared', 'notes.txt'), 'kept');
    expect(lstatSync(join(source, 'bash')).mode & 0o7777).toBe(0o4755);

    const report = await handBackFiles(source, destination);

    expect(lstatSync(join(destination, 'bash')).mode & 0o7777).toBe(0o755);
    expect(lstatSync(join(destination, 'tool')).mode & 0o7777).toBe(0o750);
    expect(lstatSync(join(destination, 'shared')).mode & 0o7777).toBe(0o775);
    expect(readFileSync(join(destination, 'shared', 'notes.txt'), 'utf8')).toBe('kept');
    expect(readFileSync(join(destination, 'bash'), 'utf8')).toBe('#!/bin/sh\n');
    expect(report.clearedBits.sort()).toEqual(['bash', 'shared', 'tool']);
    expect(report).toMatchObject({ files: 3, bytes: 10 + 1 + 4, leftOut: [] });
  });

  it('never follows a link: a link to a host file or folder is listed with its target, its content never read', async () => {
    const { source, destination, root } = fresh();
    writeFileSync(join(root, 'host-secret'), 'secret');
    mkdirSync(join(root, 'host-folder'));
    writeFileSync(join(root, 'host-folder', 'key'), 'key');
    symlinkSync(join(root, 'host-secret'), join(source, 'reward.txt'));
    symlinkSync(join(root, 'host-folder'), join(source, 'folder'));

    const report = await handBackFiles(source, destination);

    expect(() => lstatSync(join(destination, 'reward.txt'))).toThrow();
    expect(() => lstatSync(join(destination, 'folder'))).toThrow();
    expect(report.links).toEqual([
      { path: 'folder', target: join(root, 'host-folder') },
      { path: 'reward.txt', target: join(root, 'host-secret') },
    ]);
    expect(report.files).toBe(0);
  });

  it('keeps a link as a link when asked, and still reads nothing through it', async () => {
    const { source, destination } = fresh();
    symlinkSync('/etc/passwd', join(source, 'passwd'));
    const report = await handBackFiles(source, destination, { links: 'keep' });
    expect(lstatSync(join(destination, 'passwd')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(destination, 'passwd'))).toBe('/etc/passwd');
    expect(report.files).toBe(0);
  });

  it('leaves out sockets and files past the limits, naming each', async () => {
    const { source, destination } = fresh();
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(join(source, 'agent.sock'), resolve));
    writeFileSync(join(source, 'big.bin'), Buffer.alloc(2048));
    writeFileSync(join(source, 'small.txt'), 'ok');

    const report = await handBackFiles(source, destination, { maxFileBytes: 1024 });

    expect(report.leftOut).toEqual([
      { path: 'agent.sock', reason: 'a socket, never opened' },
      { path: 'big.bin', reason: '2048 bytes, over the 1024 handed back' },
    ]);
    expect(readFileSync(join(destination, 'small.txt'), 'utf8')).toBe('ok');
    expect(() => lstatSync(join(destination, 'big.bin'))).toThrow();
  });

  it('a move removes the source once copied; a source that is a link is refused', async () => {
    const { source, destination, root } = fresh();
    mkdirSync(join(source, 'logs', 'verifier'), { recursive: true });
    writeFileSync(join(source, 'logs', 'verifier', 'reward.txt'), '1\n');
    await handBackFiles(source, destination, { removeSource: true });
    expect(readFileSync(join(destination, 'logs', 'verifier', 'reward.txt'), 'utf8')).toBe('1\n');
    expect(() => lstatSync(source)).toThrow();

    symlinkSync(join(root, 'back'), join(root, 'linked'));
    await expect(handBackFiles(join(root, 'linked'), join(root, 'again'))).rejects.toThrow(/not a folder/);
  });
});
