import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { loadHarborTask } from '../../src/tasks/harbor-task.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { writeHarborTask } from './harbor-fixtures.js';

// A dataset's task.toml names variables and an image that reach a sandbox's command line (bwrap's --setenv) and the
// engine's (docker create, pull, inspect). A name bwrap cannot set, or an image that reads as an option, is refused
// when the task is read, naming the file and the field, instead of failing, or changing the command, once a trial runs.
describe("a Harbor task's variables and image", () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());
  const task = (name: string, toml: string) => writeHarborTask(directory.path, name, { 'task.toml': toml });

  it('refuses a variable whose name is not a POSIX name, naming it', async () => {
    const dir = task('equals', '[environment.env]\n"A=B" = "x"\n');
    await expect(loadHarborTask(dir)).rejects.toThrow(
      `${join(dir, 'task.toml')}: field "environment.env.A=B": a variable name is letters, digits and "_", not starting with a digit`,
    );
    const verifier = task('digit', '[verifier.env]\n"1X" = "x"\n');
    await expect(loadHarborTask(verifier)).rejects.toThrow('field "verifier.env.1X"');
  });

  it('refuses a value holding a NUL byte', async () => {
    const dir = task('nul', '[solution.env]\nX = "a\\u0000b"\n');
    await expect(loadHarborTask(dir)).rejects.toThrow('field "solution.env.X": a value without NUL bytes');
  });

  it('refuses an image reference that reads as an option or holds a space', async () => {
    for (const image of ['--privileged', '-v=/:/host', 'debian bookworm']) {
      const dir = task(`image-${image.length}`, `[environment]\ndocker_image = ${JSON.stringify(image)}\n`);
      await expect(loadHarborTask(dir)).rejects.toThrow(
        'field "environment.docker_image": an image reference',
      );
    }
  });

  it('takes ordinary names, values and references', async () => {
    const dir = task(
      'fine',
      '[environment]\ndocker_image = "ghcr.io/org/image:1.2@sha256:abc"\n[environment.env]\nLD_PRELOAD = "./x.so"\n_A1 = 3\n',
    );
    const loaded = await loadHarborTask(dir);
    expect(loaded.container.image).toBe('ghcr.io/org/image:1.2@sha256:abc');
    expect(loaded.environmentEnv).toEqual({ LD_PRELOAD: './x.so', _A1: '3' });
  });
});
