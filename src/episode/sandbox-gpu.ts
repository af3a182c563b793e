import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { UserError } from '../errors.js';
import type { MovedMount } from './sandbox-bubblewrap.js';

/** The NVIDIA driver's nodes every process using any of its GPUs opens, shown when the host has them. */
const NVIDIA_SHARED_NODES = ['nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia-modeset'];

/**
 * What a sandbox given GPU `index` shows of the host's /dev: `/dev/nvidia<index>` (which must exist) and the
 * driver's shared nodes that exist, each at its own name in the sandbox's /dev, whatever `devRoot` the host's lie in
 * (tests give a folder of stand-ins). No other GPU's node is shown, so CUDA inside enumerates that one device alone.
 */
export function gpuDeviceNodes(index: number, devRoot = '/dev'): MovedMount[] {
  const own = join(devRoot, `nvidia${index}`);
  if (!isDeviceNode(own)) {
    throw new UserError(
      `GPU ${index}: there is no ${own} on this machine; list in sandboxGpus only GPUs this machine has (nvidia-smi -L)`,
    );
  }
  const nodes = [{ host: own, inside: `/dev/nvidia${index}` }];
  for (const name of NVIDIA_SHARED_NODES) {
    const host = join(devRoot, name);
    if (isDeviceNode(host)) nodes.push({ host, inside: `/dev/${name}` });
  }
  return nodes;
}

/** A character device, or (in a test's stand-in folder) any file. */
function isDeviceNode(path: string): boolean {
  if (!existsSync(path)) return false;
  const stat = statSync(path);
  return stat.isCharacterDevice() || stat.isFile();
}

/**
 * `CUDA_VISIBLE_DEVICES` for a process given GPU `index`: in a bubblewrap sandbox the one node shown is the only
 * device CUDA enumerates, so it is device 0 there; without a sandbox every GPU is visible and the index is the host's.
 */
export function cudaVisibleDevices(index: number, sandboxed: boolean): string {
  return sandboxed ? '0' : String(index);
}
