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

/** How a task's own image is built from its Dockerfile. */
export interface ImageBuild {
  dockerfile: string;
  context: string;
  tag: string;
}

/**
 * Where a task's own image comes from: built from its Dockerfile, or its pinned `docker_image` (used when the engine
 * has it or can pull it; else built from `fallback`, its Dockerfile, when it has one).
 */
export type ImageSource = ImageBuild | { image: string; fallback?: ImageBuild };

/**
 * How a task runs here: in bubblewrap on the host's programs; in a container of its own image, started by the
 * configured engine with the sandbox's mounts; or not at all, and why.
 */
export type TaskEnvironment =
  | { kind: 'host'; network: TaskNetwork }
  | { kind: 'container'; engine: string; source: ImageSource; network: TaskNetwork }
  | { kind: 'skipped'; reason: string };

/** Decides where a Harbor task runs: never silently dropped, a skipped task says why. */
export function taskEnvironment(
  task: HarborTask,
  /** Images whose environment the host provides: a task naming one runs in bubblewrap, as one naming none. */
  hostCompatibleImages: readonly string[],
  internet: InternetPolicy,
  /** The container engine configured (`--container-engine`), if any. */
  engine: 'docker' | 'podman' | null,
  findProgram: (name: string) => string | null = programOnPath,
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
  if (engine === null) {
    return {
      kind: 'skipped',
      reason: `it needs its own container (${needs}) and no container engine is configured (--container-engine docker or podman)`,
    };
  }
  const found = findProgram(engine);
  if (found === null) {
    return { kind: 'skipped', reason: `it needs its own container (${needs}) and ${engine} is not on PATH` };
  }
  const build: ImageBuild | null = task.container.dockerfile
    ? {
        dockerfile: path.join(task.dir, 'environment', 'Dockerfile'),
        context: path.join(task.dir, 'environment'),
        tag: `mass-harbor/${task.name.toLowerCase()}:local`,
      }
    : null;
  const source: ImageSource =
    image === null ? build! : { image, ...(build === null ? {} : { fallback: build }) };
  return { kind: 'container', engine: found, source, network };
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
