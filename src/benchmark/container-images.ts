import { execFile } from 'node:child_process';

import { z } from 'zod';

import type { ContainerImage } from '../episode/sandbox-container.js';
import { SystemError } from '../errors.js';
import type { RunConfig } from '../config/run-config.js';
import type { Run } from '../store/run-store.js';
import type { HarborTask } from '../tasks/harbor-task.js';
import { durationMs, timerDelay } from '../timer-duration.js';
import { benchmarkPath } from './benchmark-records.js';
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
    `${benchmarkPath(benchmark)}/image/${task.name}`,
    async () => {
      const timeout = timerDelay(durationMs(task.buildTimeoutSec, 's'));
      if (!('image' in source)) return { engine, image: await build(engine, source, timeout) };
      // A pinned image the engine has, or can pull, is used as it is: building it again may need the internet.
      if (await engineSucceeds(engine, ['image', 'inspect', source.image], ENGINE_TIMEOUT_MS)) {
        return { engine, image: source.image };
      }
      try {
        await engineCommand(engine, ['pull', source.image], timeout);
        return { engine, image: source.image };
      } catch (error) {
        if (!source.fallback) throw error;
      }
      return { engine, image: await build(engine, source.fallback, timeout) };
    },
    { output: MadeImage },
  );
}

const ENGINE_TIMEOUT_MS = 60_000;

/**
 * Builds the task's image from its Dockerfile. Its `RUN` steps reach the network the engine gives builds; an engine
 * started without a bridge (`scripts/install-container-engine.sh`) has none, and the build then uses the host's, as
 * a build on a bridge would reach the same places. Trials themselves never get either.
 */
async function build(engine: string, image: ImageBuild, timeout: number): Promise<string> {
  const bridged = await engineSucceeds(engine, ['network', 'inspect', 'bridge'], ENGINE_TIMEOUT_MS);
  await engineCommand(
    engine,
    [
      'build',
      ...(bridged ? [] : ['--network', 'host']),
      '--tag',
      image.tag,
      '--file',
      image.dockerfile,
      image.context,
    ],
    timeout,
  );
  return image.tag;
}

async function engineSucceeds(engine: string, args: string[], timeout: number): Promise<boolean> {
  try {
    await engineCommand(engine, args, timeout);
    return true;
  } catch {
    return false;
  }
}

function engineCommand(engine: string, args: string[], timeout: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    execFile(engine, args, { timeout, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      const tail = String(stderr).trimEnd().split('\n').slice(-5).join('\n');
      reject(new SystemError(`${engine} ${args[0]} failed: ${tail || error.message}`));
    });
  });
}
