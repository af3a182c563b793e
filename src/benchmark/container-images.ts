import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { z } from 'zod';

import type { ContainerImage } from '../episode/sandbox-container.js';
import { SystemError, UserError, errorMessage } from '../errors.js';
import type { RunConfig } from '../config/run-config.js';
import type { Run } from '../store/run-store.js';
import type { HarborTask } from '../tasks/harbor-task.js';
import { durationMs, timerDelay } from '../timer-duration.js';
import { benchmarkImageKey } from '../work/step-keys.js';
import { remoteAddSources } from './dockerfile-sources.js';
import type { ImageBuild, ImageSource } from './task-environment.js';

const MadeImage = z.object({ engine: z.string(), image: z.string() }).strict();

/**
 * A task's own image made ready as a step (`benchmarks/<benchmark>/image/<task>`), under its build timeout: its
 * pinned `docker_image` when the engine has it or can pull it, else built from its Dockerfile. An engine that fails
 * throws (the step is redone on the next run) with the engine's last lines, and the caller lists the task as skipped
 * with them.
 */
export function containerImageStep(
  run: Run<RunConfig>,
  benchmark: string,
  task: HarborTask,
  engine: string,
  source: ImageSource,
): Promise<ContainerImage> {
  return run.step(
    benchmarkImageKey(benchmark, task.name),
    async () => {
      const timeout = timerDelay(durationMs(task.buildTimeoutSec, 's'));
      if (!('image' in source)) return { engine, image: await build(engine, source, timeout) };
      // A pinned image the engine has, or can pull, is used as it is (building it again may need the internet), by
      // the ID it has now: the name may be given to another image later, and a resumed run must run this one.
      const present = await imageId(engine, source.image);
      if (present !== null) return { engine, image: present };
      try {
        await engineCommand(engine, ['pull', source.image], timeout);
        const pulled = await imageId(engine, source.image);
        if (pulled === null) throw new SystemError(`${engine} pulled ${source.image} but does not list it`);
        return { engine, image: pulled };
      } catch (error) {
        if (!source.fallback) throw error;
      }
      return { engine, image: await build(engine, source.fallback, timeout) };
    },
    { output: MadeImage },
  );
}

const ENGINE_TIMEOUT_MS = 60_000;

/** Set to `host` to give a build on an engine without a bridge the host's network (see `buildNetworkArguments`). */
export const BUILD_NETWORK_VARIABLE = 'MASS_BUILD_NETWORK';

/**
 * The network of a build's `RUN` steps. On an engine with a bridge, the engine's own (the internet, not the host's
 * loopback). An engine started without one (`scripts/install-container-engine.sh`) can only give a build the host's
 * network, where a dataset's Dockerfile reaches every service of the host's loopback (a model server, Redis, mass's
 * own servers): such a build gets no network unless `MASS_BUILD_NETWORK=host` says the dataset is trusted.
 */
export function buildNetworkArguments(
  bridged: boolean,
  environment: NodeJS.ProcessEnv = process.env,
): string[] {
  if (bridged) return [];
  const chosen = environment[BUILD_NETWORK_VARIABLE];
  if (chosen === undefined || chosen === '' || chosen === 'none') return ['--network', 'none'];
  if (chosen === 'host') return ['--network', 'host'];
  throw new UserError(`${BUILD_NETWORK_VARIABLE} is ${JSON.stringify(chosen)}: set it to host or none`);
}

/**
 * Builds the task's image from its Dockerfile (its network: `buildNetworkArguments`; trials never get any) and
 * returns the ID the build gave, not its tag: a tag is a name anyone may build over later (another dataset's task of
 * the same name, another run), and a resumed run must run the image its own step built.
 */
async function build(engine: string, image: ImageBuild, timeout: number): Promise<string> {
  await refuseRemoteAdds(image.dockerfile);
  const bridged = await engineSucceeds(engine, ['network', 'inspect', 'bridge'], ENGINE_TIMEOUT_MS);
  const network = buildNetworkArguments(bridged);
  const scratch = await mkdtemp(join(tmpdir(), 'mass-image-'));
  const idFile = join(scratch, 'id');
  try {
    try {
      await engineCommand(
        engine,
        [
          'build',
          ...network,
          '--iidfile',
          idFile,
          '--tag',
          image.tag,
          '--file',
          image.dockerfile,
          image.context,
        ],
        timeout,
      );
    } catch (error) {
      const text = errorMessage(error);
      // A base image is pulled by the engine itself, whatever network the build's steps get.
      const base = unpulledBaseImage(text);
      if (base !== null) {
        throw new SystemError(
          `${text}\n(the base image ${base} is not in the engine, and the engine could not pull it: where no registry is reachable, pull it on a machine that reaches one, then \`docker save\` it there and \`docker load\` it here; a reference pinned by its digest needs that very image)`,
        );
      }
      // The hint only where a step met the missing network (a COPY outside the context is not fixed by one).
      if (network[1] !== 'none' || !metMissingNetwork(text)) throw error;
      throw new SystemError(
        `${text}\n(the build had no network: the engine has no bridge, and a build on the host's network reaches the host's own services; for a dataset you trust, set ${BUILD_NETWORK_VARIABLE}=host)`,
      );
    }
    const id = (await readFile(idFile, 'utf8').catch(() => '')).trim();
    if (!/^sha256:[0-9a-f]{64}$/.test(id)) {
      throw new SystemError(
        `${engine} build of ${image.tag} gave no image ID (${JSON.stringify(id.slice(0, 80))})`,
      );
    }
    return id;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** What a build step prints when it needed the network it did not have (apt, pip, curl, git, wget, npm). */
const NETWORK_FAILURE =
  /Temporary failure (resolving|in name resolution)|Could not resolve|Network is unreachable|Failed to fetch|Failed to establish a new connection|Connection refused|no such host|getaddrinfo|unable to access 'http/i;

/**
 * The base image a failed build stopped at (pure): the reference of its last step when that step is a `FROM`, as
 * Docker's builder numbers them (`Step 1/15 : FROM debian@sha256:…`); null when it failed at another step.
 */
export function unpulledBaseImage(text: string): string | null {
  const steps = [...text.matchAll(/\bStep \d+\/\d+ : (\S+)\s+(\S+)/g)];
  const last = steps.at(-1);
  return last !== undefined && last[1]!.toUpperCase() === 'FROM' ? last[2]! : null;
}

/** Whether a failed build's text says a step needed the network (`NETWORK_FAILURE`). */
export function metMissingNetwork(text: string): boolean {
  return NETWORK_FAILURE.test(text);
}

/** The most of a Dockerfile read for its `ADD` lines; a longer one is refused. */
const MAX_DOCKERFILE_BYTES = 1024 * 1024;

/**
 * Refuses a Dockerfile whose `ADD` fetches a URL (`remoteAddSources`: the daemon fetches it from the host's own
 * network, whatever the build's network), unless the dataset is trusted (`MASS_BUILD_NETWORK=host`).
 */
async function refuseRemoteAdds(dockerfile: string): Promise<void> {
  if (process.env[BUILD_NETWORK_VARIABLE] === 'host') return;
  const handle = await open(dockerfile, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  let text: string;
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_DOCKERFILE_BYTES) {
      throw new SystemError(`${dockerfile}: not a regular file of at most ${MAX_DOCKERFILE_BYTES} bytes`);
    }
    text = (await handle.readFile()).toString('utf8');
  } finally {
    await handle.close();
  }
  const remote = remoteAddSources(text);
  if (remote.length === 0) return;
  const named = remote.map(({ line, source }) => `line ${line}: ADD ${source}`).join('; ');
  throw new SystemError(
    `${dockerfile} fetches by URL (${named}): the engine's daemon fetches an ADD's URL from the host's own network, where it reaches the host's services and a cloud's metadata address, whatever network the build gets. Copy the file into environment/ and COPY it, or, for a dataset you trust, set ${BUILD_NETWORK_VARIABLE}=host`,
  );
}

async function engineSucceeds(engine: string, args: string[], timeout: number): Promise<boolean> {
  try {
    await engineCommand(engine, args, timeout);
    return true;
  } catch {
    return false;
  }
}

/** The ID of the image the engine has under `name` (`sha256:…`); null when it has none. */
async function imageId(engine: string, name: string): Promise<string | null> {
  try {
    const id = (
      await engineCommand(engine, ['image', 'inspect', '--format', '{{.Id}}', name], ENGINE_TIMEOUT_MS)
    ).trim();
    return /^sha256:[0-9a-f]{64}$/.test(id) ? id : null;
  } catch {
    return null;
  }
}

function engineCommand(engine: string, args: string[], timeout: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    execFile(engine, args, { timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolve(String(stdout));
      const tail = engineFailureText(String(stdout), String(stderr));
      reject(new SystemError(`${engine} ${args[0]} failed: ${tail || error.message}`));
    });
  });
}

/**
 * What a failed engine command said, for the reader (pure): its last lines of output (a build's failing step says
 * why there, e.g. apt's "Temporary failure resolving"), then its error's, without colour codes or the legacy
 * builder's deprecation notice and its "Sending build context" line, which Docker prints before every build and which
 * say nothing of the failure.
 */
export function engineFailureText(stdout: string, stderr: string): string {
  const lines = (text: string) =>
    text
      .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g'), '')
      .split('\n')
      .map((line) => line.trimEnd())
      .filter((line) => line !== '');
  const errors = lines(stderr).filter(
    (line) =>
      !/^DEPRECATED: The legacy builder is deprecated|buildx component|docs\.docker\.com\/go\/buildx/.test(
        line,
      ),
  );
  const output = lines(stdout).filter((line) => !/^Sending build context to Docker daemon/.test(line));
  return [...output.slice(-6), ...errors.slice(-4)].join('\n');
}
