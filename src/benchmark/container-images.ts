import { execFile } from 'node:child_process';

import { z } from 'zod';

import { containerImageArguments, type ContainerImage } from '../episode/sandbox-container.js';
import { SystemError } from '../errors.js';
import type { RunConfig } from '../config/run-config.js';
import type { Run } from '../store/run-store.js';
import type { HarborTask } from '../tasks/harbor-task.js';
import { durationMs, timerDelay } from '../timer-duration.js';
import { benchmarkPath } from './benchmark-records.js';
import type { ImageSource } from './task-environment.js';

const MadeImage = z.object({ engine: z.string(), image: z.string() }).strict();

/**
 * A task's own image made ready as a step (`benchmarks/<benchmark>/image/<task>`): built from its Dockerfile under
 * its build timeout, or pulled. An engine that fails throws (the step is redone on the next run) with the engine's
 * last lines, and the caller lists the task as skipped with them.
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
      const [program, ...args] = containerImageArguments(engine, source);
      await new Promise<void>((resolve, reject) => {
        execFile(
          program!,
          args,
          { timeout: timerDelay(durationMs(task.buildTimeoutSec, 's')), maxBuffer: 16 * 1024 * 1024 },
          (error, _stdout, stderr) => {
            if (!error) return resolve();
            const tail = String(stderr).trimEnd().split('\n').slice(-5).join('\n');
            reject(new SystemError(`${program} ${args[0]} failed: ${tail || error.message}`));
          },
        );
      });
      return { engine, image: 'image' in source ? source.image : source.tag };
    },
    { output: MadeImage },
  );
}
