import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { bubblewrapArguments, type BubblewrapMounts } from '../../src/episode/sandbox-bubblewrap.js';
import { cudaVisibleDevices, gpuDeviceNodes } from '../../src/episode/sandbox-gpu.js';
import { Sandbox } from '../../src/episode/sandbox.js';
import { temporaryDirectory } from '../support/fixtures.js';

// These machines have no GPU: the tests stop at what the sandbox would bind (bwrap's arguments), on stand-in files
// for /dev's nodes. That CUDA inside then sees the one GPU as device 0 needs a GPU machine to check.
describe('a GPU in the sandbox', () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let devRoot: string;

  beforeEach(() => {
    directory = temporaryDirectory('mass-gpu-');
    devRoot = join(directory.path, 'dev');
    mkdirSync(devRoot);
    for (const name of ['nvidia0', 'nvidia1', 'nvidia2', 'nvidiactl', 'nvidia-uvm', 'null']) {
      writeFileSync(join(devRoot, name), '');
    }
  });
  afterEach(() => directory.remove());

  it('shows its own node and the driver’s shared ones that exist, never another GPU’s', () => {
    expect(gpuDeviceNodes(1, devRoot)).toEqual([
      { host: join(devRoot, 'nvidia1'), inside: '/dev/nvidia1' },
      { host: join(devRoot, 'nvidiactl'), inside: '/dev/nvidiactl' },
      { host: join(devRoot, 'nvidia-uvm'), inside: '/dev/nvidia-uvm' },
    ]);
    writeFileSync(join(devRoot, 'nvidia-uvm-tools'), '');
    writeFileSync(join(devRoot, 'nvidia-modeset'), '');
    expect(gpuDeviceNodes(0, devRoot).map((node) => node.inside)).toEqual([
      '/dev/nvidia0',
      '/dev/nvidiactl',
      '/dev/nvidia-uvm',
      '/dev/nvidia-uvm-tools',
      '/dev/nvidia-modeset',
    ]);
  });

  it('dev-binds them into the sandbox’s own /dev, before /dev turns read-only', () => {
    const args = bubblewrapArguments(mounts(gpuDeviceNodes(2, devRoot)), '/workspace', ['true'], {
      sourceOf: (path) => path,
    });
    const devBinds = args.flatMap((arg, index) =>
      arg === '--dev-bind' ? [`${args[index + 1]} -> ${args[index + 2]}`] : [],
    );
    expect(devBinds).toEqual([
      `${join(devRoot, 'nvidia2')} -> /dev/nvidia2`,
      `${join(devRoot, 'nvidiactl')} -> /dev/nvidiactl`,
      `${join(devRoot, 'nvidia-uvm')} -> /dev/nvidia-uvm`,
    ]);
    const devAt = args.indexOf('--dev');
    const firstBind = args.indexOf('--dev-bind');
    const readOnly = args.findIndex((arg, index) => arg === '--remount-ro' && args[index + 1] === '/dev');
    expect(devAt).toBeLessThan(firstBind);
    expect(firstBind).toBeLessThan(readOnly);
    expect(args.join(' ')).not.toMatch(/nvidia[01]\b/);
    // Without a GPU nothing of the host's /dev is shown.
    expect(
      bubblewrapArguments(mounts([]), '/workspace', ['true'], { sourceOf: (path) => path }),
    ).not.toContain('--dev-bind');
  });

  it('names the GPU in CUDA_VISIBLE_DEVICES: 0 in a sandbox (the only one shown), the host’s index without', () => {
    expect(cudaVisibleDevices(2, true)).toBe('0');
    expect(cudaVisibleDevices(2, false)).toBe('2');
  });

  it('refuses a GPU the machine does not have', async () => {
    expect(() => gpuDeviceNodes(7, devRoot)).toThrow(UserError);
    expect(() => gpuDeviceNodes(7, devRoot)).toThrow(/GPU 7: there is no .*nvidia7 on this machine/);
    const workspace = join(directory.path, 'workspace');
    mkdirSync(workspace);
    await expect(
      Sandbox.open({
        mode: 'bubblewrap',
        workspace,
        stateDirectory: join(directory.path, 'sandbox'),
        gpu: 7,
        devRoot,
      }),
    ).rejects.toThrow(/GPU 7: there is no/);
  });
});

function mounts(devices: BubblewrapMounts['devices']): BubblewrapMounts {
  const moved = (path: string) => ({ host: path, inside: path });
  return {
    workspace: { host: '/srv/ws', inside: '/workspace' },
    home: { host: '/srv/home', inside: '/home/agent' },
    state: moved('/srv/state'),
    writableDirectories: [],
    placed: [],
    readOnlyPaths: [],
    readableDirectories: [],
    hiddenDirectories: [],
    hiddenFiles: [],
    emptyFile: '/srv/state/empty',
    system: [],
    systemFiles: [],
    devices,
    tmpSizeBytes: 1024,
  };
}
