import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SandboxResult } from '../../src/episode/sandbox.js';
import {
  LINGERING_PROCESSES_SCRIPT,
  capture,
  openSandbox,
  processesMentioning,
  uniqueMarker,
  type SandboxFixture,
} from './sandbox-helpers.js';

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Agent code that tries every escape it can and reports, per attempt, `ok` or the error it got. */
const ADVERSARY_PYTHON = `
import json, os, socket, sys
targets = json.loads(sys.argv[1])
results = {}
seen = {}

def attempt(name, action):
    try:
        seen[name] = action()
        results[name] = 'ok'
    except Exception as error:
        results[name] = type(error).__name__ + ': ' + str(error)

def write(path, mode='w'):
    def action():
        with open(path, mode) as file:
            file.write('escaped')
    return action

protected = targets['protected']
attempt('workspace', write('output.txt'))
attempt('beside-workspace', write(targets['beside']))
attempt('repository', write(targets['repository']))
attempt('etc', write(targets['etc']))
attempt('real-tmp', write(targets['tmp']))
attempt('host-port', lambda: socket.create_connection(('127.0.0.1', targets['port']), timeout=2).close())
attempt('other-socket', lambda: socket.socket(socket.AF_UNIX).connect(targets['socket']))
attempt('hidden-read', lambda: open(targets['hidden']).read())
attempt('protected-write', write(protected))
attempt('protected-append', write(protected, 'a'))
attempt('protected-delete', lambda: os.remove(protected))
attempt('protected-rename', lambda: os.rename(protected, protected + '.moved'))
attempt('protected-parent-rename', lambda: os.rename(os.path.dirname(protected), os.path.dirname(protected) + '-moved'))
attempt('protected-chmod', lambda: os.chmod(protected, 0o666))
attempt('protected-hard-link', lambda: os.link(protected, 'linked.csv'))
attempt('root-listing', lambda: sorted(os.listdir('/root')))
attempt('home-listing', lambda: sorted(os.listdir('/home')))
attempt('root-write', write('/root/' + os.path.basename(targets['beside'])))
attempt('home-write', write('/home/' + os.path.basename(targets['beside'])))
attempt('hidden-key-read', lambda: open(targets['key']).read())
attempt('hidden-key-write', write(targets['key']))
attempt('readable-read', lambda: open(targets['readable']).read())
attempt('readable-write', write(targets['readable']))
attempt('hidden-inside-readable', lambda: sorted(os.listdir(targets['hiddenInsideReadable'])))
attempt('where', lambda: [os.getcwd(), os.environ['HOME']])
print(json.dumps(results))
print('seen ' + json.dumps(seen))
`;

const ADVERSARY_SHELL = `
touch /etc/"$MARKER"-touch && echo "touch-etc ok" || echo "touch-etc failed"
mount -o remount,rw / 2>/dev/null && echo "remount ok" || echo "remount failed"
umount "$PROTECTED" 2>/dev/null && echo "umount ok" || echo "umount failed"
echo forged 2>/dev/null > "$PROTECTED" && echo "shell-protected-write ok" || echo "shell-protected-write failed"
rm -f "$PROTECTED" 2>/dev/null && echo "shell-protected-delete ok" || echo "shell-protected-delete failed"
/usr/bin/python3 adversary.py "$TARGETS"
${LINGERING_PROCESSES_SCRIPT}
`;

describe('sandbox: agent code cannot escape', () => {
  const marker = uniqueMarker();
  // Outside /tmp (the sandbox has its own), where a git checkout ignores it should a run leave it behind. Not
  // shown (the sandbox shows nothing it is not given), and hidden besides.
  const hiddenDirectory = join(repositoryRoot, 'node_modules', '.cache', marker);
  // A directory the sandbox shows (as it shows the harness), holding a key in a dotfile the configuration hides
  // and a folder of answers it hides too.
  const readableDirectory = join(repositoryRoot, 'node_modules', '.cache', `${marker}-readable`);
  const keyFile = join(readableDirectory, '.netrc');
  const hiddenInsideReadable = join(readableDirectory, 'answers');
  // The sandbox is given the readable directory through a symbolic link (a checkout whose node_modules is a link, say):
  // it is shown at the link's path, and what is hidden at its real path must be hidden there too.
  const readableLink = join(repositoryRoot, 'node_modules', '.cache', `${marker}-link`);
  const throughLink = (path: string): string => join(readableLink, relative(readableDirectory, path));
  let fixture: SandboxFixture;
  let hostServer: Server;
  let socketServer: Server;
  let hostConnections = 0;
  let result: SandboxResult;
  let stdout: string;
  let seen: Record<string, unknown>;
  let protectedPath: string;
  let targets: Record<string, string | number>;

  beforeAll(async () => {
    hostServer = createServer((socket) => {
      hostConnections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
    mkdirSync(hiddenDirectory, { recursive: true });
    writeFileSync(join(hiddenDirectory, 'solution.py'), 'print("the reference solution")\n');
    mkdirSync(hiddenInsideReadable, { recursive: true });
    writeFileSync(join(hiddenInsideReadable, 'solution.py'), 'print("the reference solution")\n');
    writeFileSync(join(readableDirectory, 'shown.txt'), 'shown\n');
    writeFileSync(keyFile, 'machine api.example.com password sk-not-for-agents\n');
    symlinkSync(readableDirectory, readableLink);
    // Another episode's proxy socket: a read-only mount would not stop a connection, hiding does.
    socketServer = createServer((socket) => {
      hostConnections++;
      socket.destroy();
    });
    const socketPath = join(hiddenDirectory, 'proxy.sock');
    await new Promise<void>((resolve) => socketServer.listen(socketPath, resolve));

    fixture = await openSandbox('bubblewrap', ({ workspace }) => {
      mkdirSync(join(workspace, 'data'));
      protectedPath = join(workspace, 'data', 'prices.csv');
      writeFileSync(protectedPath, 'day,price\n1,100\n');
      return {
        readOnlyPaths: ['data/prices.csv'],
        readableDirectories: [readableLink],
        hiddenDirectories: [hiddenDirectory, keyFile, hiddenInsideReadable],
      };
    });
    // The workspace is at /workspace inside, whatever its host path: the agents know only that one.
    const protectedInside = fixture.sandbox.pathInside(protectedPath);
    expect(protectedInside).toBe('/workspace/data/prices.csv');

    writeFileSync(join(fixture.workspace, 'adversary.py'), ADVERSARY_PYTHON);
    targets = {
      protected: protectedInside,
      beside: join(fixture.root, `${marker}-beside.txt`),
      repository: join(repositoryRoot, `${marker}.txt`),
      etc: `/etc/${marker}`,
      tmp: `/tmp/${marker}`,
      port: (hostServer.address() as { port: number }).port,
      hidden: join(hiddenDirectory, 'solution.py'),
      socket: socketPath,
      key: throughLink(keyFile),
      readable: throughLink(join(readableDirectory, 'shown.txt')),
      hiddenInsideReadable: throughLink(hiddenInsideReadable),
    };
    const output = capture();
    const errors = capture();
    result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', ADVERSARY_SHELL],
      env: { MARKER: marker, PROTECTED: protectedInside, TARGETS: JSON.stringify(targets) },
      stdout: output.sink,
      stderr: errors.sink,
      limits: { wallClockSeconds: 20 },
    });
    stdout = output.text();
    if (result.exitCode !== 0) throw new Error(`adversary failed: ${errors.text()}`);
    seen = JSON.parse(
      stdout
        .split('\n')
        .find((line) => line.startsWith('seen '))!
        .slice('seen '.length),
    ) as Record<string, unknown>;
  });

  afterAll(async () => {
    for (const path of [
      targets.beside,
      targets.repository,
      targets.etc,
      targets.tmp,
      `/etc/${marker}-touch`,
    ]) {
      rmSync(String(path), { force: true });
    }
    await new Promise<void>((resolve) => hostServer.close(() => resolve()));
    await new Promise<void>((resolve) => socketServer.close(() => resolve()));
    await fixture.close();
    rmSync(hiddenDirectory, { recursive: true, force: true });
    rmSync(readableDirectory, { recursive: true, force: true });
    rmSync(readableLink, { force: true });
  });

  it('can write in its workspace, and nowhere outside it', () => {
    const attempts = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{'))!) as Record<
      string,
      string
    >;
    expect(attempts.workspace).toBe('ok');
    expect(readFileSync(join(fixture.workspace, 'output.txt'), 'utf8')).toBe('escaped');
    // The checkout is not shown: its path holds only the folders the sandbox mounts (or, under /tmp, lands in the
    // sandbox's private /tmp).
    if (!repositoryRoot.startsWith('/tmp/')) {
      expect(attempts.repository).toMatch(/Read-only file system|No such file or directory/);
    }
    expect(attempts.etc).toMatch(/Read-only file system/);
    expect(stdout).toContain('touch-etc failed');
    expect(stdout).toContain('remount failed');
    // Beside the workspace and in /tmp the writes land in the sandbox's private /tmp, gone with it.
    for (const path of [
      targets.beside,
      targets.repository,
      targets.etc,
      targets.tmp,
      `/etc/${marker}-touch`,
    ]) {
      expect(existsSync(String(path)), String(path)).toBe(false);
    }
  });

  it('reaches no host port, no hidden socket, and reads no hidden directory', () => {
    const attempts = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{'))!) as Record<
      string,
      string
    >;
    expect(attempts['host-port']).toMatch(/ConnectionRefused|Network is unreachable|OSError/);
    expect(attempts['other-socket']).toMatch(/FileNotFoundError/);
    expect(hostConnections).toBe(0);
    expect(attempts['hidden-read']).toMatch(/FileNotFoundError/);
  });

  it('sees no host home, and hidden paths in what it sees are empty read-only folders and files', () => {
    const attempts = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{'))!) as Record<
      string,
      string
    >;
    expect(seen.where).toEqual(['/workspace', '/home/agent']);
    // The host's /root is not there at all; /home holds the sandbox's own home alone.
    expect(attempts['root-listing']).toMatch(/FileNotFoundError/);
    expect(seen['home-listing']).toEqual(['agent']);
    expect(attempts['root-write']).toMatch(/No such file or directory|Read-only file system/);
    for (const name of ['home-write', 'hidden-key-write', 'readable-write'])
      expect(attempts[name], name).toMatch(/Read-only file system/);
    expect(seen['readable-read']).toBe('shown\n');
    expect(seen['hidden-key-read']).toBe('');
    expect(seen['hidden-inside-readable']).toEqual([]);
    expect(readFileSync(keyFile, 'utf8')).toContain('sk-not-for-agents');
  });

  it('cannot change, delete, rename or unmount a protected file, nor move its directory', () => {
    const attempts = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{'))!) as Record<
      string,
      string
    >;
    for (const name of [
      'protected-write',
      'protected-append',
      'protected-delete',
      'protected-rename',
      'protected-parent-rename',
      'protected-chmod',
      'protected-hard-link',
    ]) {
      expect(attempts[name], name).not.toBe('ok');
    }
    for (const name of ['umount', 'shell-protected-write', 'shell-protected-delete']) {
      expect(stdout, name).toContain(`${name} failed`);
    }
    expect(readFileSync(protectedPath, 'utf8')).toBe('day,price\n1,100\n');
    expect(statSync(protectedPath).mode & 0o777).toBe(0o644);
    expect(existsSync(join(fixture.workspace, 'data-moved'))).toBe(false);
  });

  it('leaves no process behind: nohup, setsid and a double fork all die with the run', () => {
    expect(result.exitCode).toBe(0);
    expect(stdout).toContain('lingering processes: 3');
    expect(processesMentioning(marker)).toEqual([]);
  });
});
