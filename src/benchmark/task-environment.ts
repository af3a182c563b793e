import { createHash } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

import type { EpisodeNetwork } from '../tasks/task-network.js';
import type { HarborTask } from '../tasks/harbor-task.js';

/**
 * What a benchmark's agents may reach when its task asks for the internet (`allow_internet`, true unless the task
 * says false): `public` (the default: every public host, through the trial's egress proxy, every request logged;
 * the machine's own network only where the run configuration opens it), `allow` (the hosts of an allow-list, through
 * the same proxy, as a task.yaml's `environment.network.allow`), `offline` (no network, as a task that asks for none)
 * or `refuse` (such a task is skipped, with the reason). The agent, the oracle and the verifier get the same.
 */
export type InternetPolicy =
  { kind: 'public' } | { kind: 'allow'; hosts: string[] } | { kind: 'offline' } | { kind: 'refuse' };

/**
 * How a trial's network is named in its record and the printed summary: `public`, `allow:<host,…>`, `offline` (the
 * task asks for the internet and the run gave it none) or `none` (the task asks for none).
 */
export function internetLabel(task: Pick<HarborTask, 'allowInternet'>, network: EpisodeNetwork): string {
  if (network === false) return task.allowInternet ? 'offline' : 'none';
  return 'anyPublicHost' in network ? 'public' : `allow:${network.allow.join(',')}`;
}

/** What a network label (`internetLabel`) means, in a few words. */
export function describeInternet(label: string): string {
  if (label === 'public') return 'every public host, through the egress proxy';
  if (label.startsWith('allow:')) return 'these hosts only, through the egress proxy';
  if (label === 'offline') return 'the task asks for the internet; the run gave it none';
  return 'no network: the task asks for none';
}

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
  | { kind: 'host'; network: EpisodeNetwork }
  | { kind: 'container'; engine: string; source: ImageSource; network: EpisodeNetwork }
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
  let network: EpisodeNetwork = false;
  if (task.allowInternet) {
    if (internet.kind === 'refuse') {
      return {
        kind: 'skipped',
        reason:
          'it asks for the internet (allow_internet is true, or left out: Harbor defaults to true) and --internet refuse skips such tasks; run with --internet public (the default: every public host, through the egress proxy), allow:<host,…> or offline',
      };
    }
    if (internet.kind === 'public') network = { anyPublicHost: true };
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
        tag: imageTag(task),
      }
    : null;
  const source: ImageSource =
    image === null ? build! : { image, ...(build === null ? {} : { fallback: build }) };
  return { kind: 'container', engine: found, source, network };
}

/**
 * The tag a task's image is built under: its name as the engine takes one (lower case; `Fix..Git_` would be refused)
 * and a digest of its folder, so that a task of the same name in another dataset (another run's, a hostile one) never
 * builds over it. Trials run the image by the ID its build gave, never by this tag (`containerImageStep`).
 */
export function imageTag(task: Pick<HarborTask, 'name' | 'dir'>): string {
  const name = task.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 64)
    .replace(/^-+|-+$/g, '');
  const digest = createHash('sha256').update(path.resolve(task.dir)).digest('hex').slice(0, 12);
  return `mass-harbor/${name === '' ? 'task' : name}-${digest}:local`;
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
