import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import {
  assertHiddenOutsideWritable,
  commandPlan,
  forwarderRelays,
  hostPathOf,
  pathInside,
  placedPath,
  readableMounts,
  relayUrl,
  runCommandOf,
  sandboxMounts,
  socketDirectories,
  type SandboxLayoutInput,
} from '../../src/episode/sandbox-layout.js';
import { DEFAULT_DISK_BYTES, DEFAULT_PROCESS_LIMIT } from '../../src/episode/sandbox-limits.js';
import type { SystemEntry } from '../../src/episode/sandbox-system.js';

// The layout is pure: these tests give it host paths that need not exist, and no process or file is touched.
const SYSTEM: SystemEntry[] = [
  { path: '/usr', kind: 'bind' },
  { path: '/bin', kind: 'symlink', target: 'usr/bin' },
];

function input(overrides: Partial<SandboxLayoutInput> = {}): SandboxLayoutInput {
  return {
    workspace: '/runs/r/e/workspace',
    homeDirectory: '/runs/r/e/home',
    stateDirectory: '/runs/r/e/sandbox',
    writableDirectories: ['/runs/r/e/scratch'],
    placed: [
      { host: '/runs/r/verifier/tests', inside: '/tests', writable: false },
      { host: '/runs/r/e/app', inside: '/app', writable: true },
    ],
    readOnlyPaths: ['/runs/r/e/workspace/data/prices.csv'],
    hidden: [],
    readable: [],
    system: SYSTEM,
    systemFiles: [],
    devices: [],
    emptyFile: '/runs/r/e/sandbox/hidden-file',
    tmpSizeBytes: 1 << 20,
    ...overrides,
  };
}

describe('the sandbox layout', () => {
  it('mounts the workspace, the home and its own files at fixed paths, wherever they lie on the host', () => {
    const mounts = sandboxMounts(input());
    expect(mounts.workspace).toEqual({ host: '/runs/r/e/workspace', inside: '/workspace' });
    expect(mounts.home).toEqual({ host: '/runs/r/e/home', inside: '/home/agent' });
    expect(mounts.state).toEqual({ host: '/runs/r/e/sandbox', inside: '/run/mass-sandbox' });
  });

  it('hides only what it shows: a folder under an empty folder, a file under the empty file, once', () => {
    const mounts = sandboxMounts(
      input({
        readable: [{ host: '/opt/mass', inside: '/opt/mass' }],
        hidden: [
          { path: '/usr/local/secret', directory: true },
          { path: '/usr/local/secret/inner', directory: true },
          { path: '/opt/mass/.queue-key', directory: false },
          { path: '/srv/not-shown', directory: true },
        ],
      }),
    );
    // /srv is not shown at all: nothing to hide there; the inner secret is hidden with its parent.
    expect(mounts.hiddenDirectories).toEqual(['/usr/local/secret']);
    expect(mounts.hiddenFiles).toEqual(['/opt/mass/.queue-key']);
  });

  it('hides at a symbolic link’s path too what it hides at the real path of a readable folder', () => {
    const readable = readableMounts([{ given: '/home/u/linked-modules', host: '/opt/real-modules' }]);
    expect(readable).toEqual([
      { host: '/opt/real-modules', inside: '/opt/real-modules' },
      { host: '/opt/real-modules', inside: '/home/u/linked-modules' },
    ]);
    const mounts = sandboxMounts(
      input({ readable, hidden: [{ path: '/opt/real-modules/answers', directory: true }] }),
    );
    expect(mounts.hiddenDirectories).toEqual(['/opt/real-modules/answers', '/home/u/linked-modules/answers']);
  });

  it('leaves out a readable folder the system shows at the same path, unless a hidden path covers it', () => {
    const readable = [{ host: '/usr/bin', inside: '/usr/bin' }];
    expect(sandboxMounts(input({ readable })).readableDirectories).toEqual([]);
    const covered = sandboxMounts(input({ readable, hidden: [{ path: '/usr', directory: true }] }));
    expect(covered.hiddenDirectories).toEqual(['/usr']);
    expect(covered.readableDirectories).toEqual(readable);
  });

  it('refuses to hide a path the sandbox mounts writable, naming it', () => {
    const hide = (path: string) => () =>
      assertHiddenOutsideWritable(
        [{ given: `link:${path}`, path }],
        ['/runs/r/e/workspace', '/runs/r/e/home'],
      );
    expect(hide('/runs/r/e/workspace/data')).toThrow(UserError);
    expect(hide('/runs/r/e/home')).toThrow(
      'cannot hide link:/runs/r/e/home: it lies inside /runs/r/e/home, which the sandbox mounts writable',
    );
    expect(hide('/runs/r/e/workspace-other')).not.toThrow();
  });

  it('relays the model proxy and the egress proxy at their ports, each socket folder once', () => {
    const relays = forwarderRelays({
      proxySocketPath: '/tmp/s/proxy.sock',
      egressSocketPath: '/tmp/s/egress.sock',
    });
    expect(relays).toEqual([
      { port: 18080, socketPath: '/tmp/s/proxy.sock' },
      { port: 18081, socketPath: '/tmp/s/egress.sock' },
    ]);
    expect(socketDirectories(relays)).toEqual(['/tmp/s']);
    expect(relayUrl(relays, '/tmp/s/egress.sock')).toBe('http://127.0.0.1:18081');
    expect(relayUrl(relays, null)).toBeNull();
    const own = forwarderRelays({
      proxySocketPath: '/tmp/a/p.sock',
      egressSocketPath: null,
      forwarderPort: 9,
    });
    expect(own).toEqual([{ port: 9, socketPath: '/tmp/a/p.sock' }]);
  });

  it('moves host paths with their folder inside, and back', () => {
    const mounts = sandboxMounts(input());
    const cases: Array<[string, string]> = [
      ['/runs/r/e/workspace', '/workspace'],
      ['/runs/r/e/workspace/data/prices.csv', '/workspace/data/prices.csv'],
      ['/runs/r/e/home/settings.json', '/home/agent/settings.json'],
      ['/runs/r/e/sandbox/forwarder.mjs', '/run/mass-sandbox/forwarder.mjs'],
      ['/runs/r/e/app/state', '/app/state'],
      ['/opt/mass/cli.js', '/opt/mass/cli.js'],
    ];
    for (const [host, inside] of cases) {
      expect(pathInside(mounts, host)).toBe(inside);
      expect(hostPathOf(mounts, inside)).toBe(host);
    }
    // A sibling whose name only starts like a moved folder's is not inside it.
    expect(pathInside(mounts, '/runs/r/e/workspace2')).toBe('/runs/r/e/workspace2');
    expect(placedPath(mounts, '/tests', true)).toBe('/tests');
    expect(placedPath(mounts, '/tests', false)).toBe('/runs/r/verifier/tests');
    expect(() => placedPath(mounts, '/solution', true)).toThrow('no directory is placed at /solution');
  });

  it('plans a command: its folder and HOME as it sees them, the variables it may not override, the default limits', () => {
    const mounts = sandboxMounts(input());
    const marker = { name: 'MASS_SANDBOX_RUN', value: 'run-1' };
    const command = {
      command: 'python3',
      cwd: 'data',
      env: { HOME: '/root', MASS_SANDBOX_RUN: 'forged', PATH: '/opt/tool/bin:/usr/bin', LANG: 'en_GB.UTF-8' },
      limits: { wallClockSeconds: 60, memoryBytes: 1e9 },
    };
    const isolated = commandPlan(mounts, command, {
      isolated: true,
      egressProxyUrl: 'http://127.0.0.1:18081',
      gpu: 3,
      marker,
    });
    expect(isolated.cwd).toBe('/workspace/data');
    expect(isolated.env).toMatchObject({
      TMPDIR: '/tmp',
      LANG: 'en_GB.UTF-8',
      HOME: '/home/agent',
      PATH: '/usr/bin:/bin:/usr/sbin:/sbin:/opt/tool/bin',
      MASS_SANDBOX_RUN: 'run-1',
      HTTPS_PROXY: 'http://127.0.0.1:18081',
      NO_PROXY: '127.0.0.1,localhost',
      CUDA_VISIBLE_DEVICES: '0',
    });
    expect(isolated.limits).toMatchObject({
      wallClockSeconds: 60,
      memoryBytes: 1e9,
      processes: DEFAULT_PROCESS_LIMIT,
      diskBytes: DEFAULT_DISK_BYTES,
    });
    expect(isolated.limits.cpuSeconds).toBeGreaterThanOrEqual(60);
    // The disk limit measures what the agents write: the workspace, the home, the writable and writable placed folders.
    expect(isolated.diskDirectories).toEqual([
      '/runs/r/e/workspace',
      '/runs/r/e/home',
      '/runs/r/e/scratch',
      '/runs/r/e/app',
    ]);
    const onHost = commandPlan(
      mounts,
      { command: 'true' },
      { isolated: false, egressProxyUrl: null, gpu: 3, marker },
    );
    expect(onHost.cwd).toBe('/runs/r/e/workspace');
    expect(onHost.env.HOME).toBe('/runs/r/e/home');
    expect(onHost.env.CUDA_VISIBLE_DEVICES).toBe('3');
    expect(onHost.env).not.toHaveProperty('HTTPS_PROXY');
    expect(onHost.sampleIntervalMs).toBe(100);
  });

  it('runs an isolated command as a sandbox command: its folder as a host path, never as another user', () => {
    const signal = new AbortController().signal;
    expect(
      runCommandOf(
        'bubblewrap',
        { command: ['sh', '-c', 'true'], cwd: '/workspace/data', signal },
        (inside) => inside.replace('/workspace', '/host/ws'),
      ),
    ).toEqual({ command: 'sh', args: ['-c', 'true'], cwd: '/host/ws/data', signal });
    expect(() => runCommandOf('bubblewrap', { command: ['id'], user: 'root' }, (path) => path)).toThrow(
      'a bubblewrap sandbox runs every command as its own user, not as root',
    );
    expect(() => runCommandOf('host', { command: [] }, (path) => path)).toThrow(/at least its executable/);
  });
});
