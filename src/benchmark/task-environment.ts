import { accessSync, constants } from 'node:fs';
import path from 'node:path';

import type { TaskNetwork } from '../tasks/task-network.js';
import type { HarborTask } from '../tasks/harbor-task.js';

/**
 * What a benchmark's agents may reach when its task asks for the internet (`allow_internet`, true unless the task
 * says false): `refuse` (such a task is skipped, with the reason), `offline` (it runs with no network, as every
 * other task), or the hosts of an allow-list, reached through the episode's egress proxy as a task.yaml's
 * `environment.network.allow` is.
 */
export type InternetPolicy = { kind: 'refuse' } | { kind: 'offline' } | { kind: 'allow'; hosts: string[] };

/** How a task runs here: in bubblewrap on the host's programs, or not at all and why. */
export type TaskEnvironment = { kind: 'host'; network: TaskNetwork } | { kind: 'skipped'; reason: string };

/** Decides where a Harbor task runs: never silently dropped, a skipped task says why. */
export function taskEnvironment(
  task: HarborTask,
  /** Images whose environment the host provides: a task naming one runs in bubblewrap, as one naming none. */
  hostCompatibleImages: readonly string[],
  internet: InternetPolicy,
  /** Where a container engine is, if any (`docker`, then `podman` on PATH). */
  engine: string | null = containerEngine(),
): TaskEnvironment {
  let network: TaskNetwork = false;
  if (task.allowInternet) {
    if (internet.kind === 'refuse') {
      return {
        kind: 'skipped',
        reason:
          'it asks for the internet (allow_internet is true, or left out: Harbor defaults to true), and agents here reach only what an allow-list names; run with --internet offline to run it without network, or --internet allow:<host,…>',
      };
    }
    if (internet.kind === 'allow') network = { allow: internet.hosts };
  }
  if (task.container.compose) {
    return {
      kind: 'skipped',
      reason: 'it needs several containers (environment/docker-compose); mass runs one environment per task',
    };
  }
  if (task.gpus > 0) {
    return {
      kind: 'skipped',
      reason: `it asks for ${task.gpus} GPU(s) in its container; mass gives benchmark tasks none`,
    };
  }
  const image = task.container.image;
  const ownImage = task.container.dockerfile || (image !== null && !hostCompatibleImages.includes(image));
  if (!ownImage) return { kind: 'host', network };
  const needs = task.container.dockerfile
    ? 'an image built from environment/Dockerfile'
    : `the image ${image}`;
  return {
    kind: 'skipped',
    reason:
      engine === null
        ? `it needs its own container (${needs}) and no container engine (docker or podman) is installed`
        : `it needs its own container (${needs}); mass runs agents in bubblewrap only and does not start ${path.basename(engine)} containers`,
  };
}

/** The first container engine on PATH, if any. */
export function containerEngine(): string | null {
  return programOnPath('docker') ?? programOnPath('podman');
}

function programOnPath(name: string): string | null {
  for (const directory of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
