import { describe, expect, it } from 'vitest';

import type { BubblewrapMounts } from '../../src/episode/sandbox-bubblewrap.js';
import { containerRunArguments } from '../../src/episode/sandbox-container.js';

const mounts: BubblewrapMounts = {
  workspace: { host: '/runs/r/episodes/e/workspace', inside: '/workspace' },
  home: { host: '/runs/r/episodes/e/home', inside: '/home/agent' },
  state: { host: '/runs/r/episodes/e/sandbox', inside: '/run/mass' },
  writableDirectories: [],
  placed: [{ host: '/runs/r/verifier/tests', inside: '/tests', writable: false }],
  readOnlyPaths: ['/runs/r/episodes/e/workspace/data/raw/prices.csv'],
  readableDirectories: [
    { host: '/opt/mass', inside: '/opt/mass' },
    { host: '/opt/mass/suites/demo/shared', inside: '/opt/mass/suites/demo/shared' },
  ],
  hiddenDirectories: ['/opt/mass/.git', '/opt/mass/suites'],
  hiddenFiles: ['/opt/mass/.queue-secret'],
  emptyFile: '/runs/r/episodes/e/sandbox/empty',
  system: [],
  systemFiles: [],
  devices: [],
  tmpSizeBytes: 1 << 20,
};

const args = containerRunArguments({
  container: { engine: 'podman', image: 'task:local' },
  name: 'mass-1',
  mounts,
  cwd: '/workspace',
  env: { MODEL: 'm' },
  limits: { memoryBytes: 1e9, processes: 64 },
  command: ['bash', '-c', 'true'],
});
const line = args.join(' ');

describe('a command in a container of a task’s own image', () => {
  it('has no network, capability or new privilege, and runs the image with the command', () => {
    expect(args.slice(0, 2)).toEqual(['podman', 'run']);
    expect(line).toContain('--network none --cap-drop ALL --security-opt no-new-privileges');
    expect(line).toMatch(/task:local bash -c true$/);
  });

  it('hides what bubblewrap hides: an empty read-only folder over each hidden directory, an empty file over each hidden file', () => {
    expect(line).toContain('--volume /opt/mass:/opt/mass:ro');
    expect(line).toContain('--tmpfs /opt/mass/.git:ro');
    expect(line).toContain('--tmpfs /opt/mass/suites:ro');
    expect(line).toContain('--volume /runs/r/episodes/e/sandbox/empty:/opt/mass/.queue-secret:ro');
    // A readable folder inside a hidden one is still shown (the engine mounts the deeper path over the shallower).
    expect(line).toContain('--volume /opt/mass/suites/demo/shared:/opt/mass/suites/demo/shared:ro');
  });

  it('pins every folder between the workspace and a protected file, which stays read-only', () => {
    const at = (text: string) => args.indexOf(text);
    const data = '/runs/r/episodes/e/workspace/data:/workspace/data:rw';
    const raw = '/runs/r/episodes/e/workspace/data/raw:/workspace/data/raw:rw';
    const file = '/runs/r/episodes/e/workspace/data/raw/prices.csv:/workspace/data/raw/prices.csv:ro';
    for (const mount of [data, raw, file]) expect(at(mount), mount).toBeGreaterThan(0);
    expect(at(data)).toBeLessThan(at(raw));
    expect(at(raw)).toBeLessThan(at(file));
    expect(line).toContain('--volume /runs/r/verifier/tests:/tests:ro');
  });
});
