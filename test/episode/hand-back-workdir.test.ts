import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { handBackWorkdir } from '../../src/episode/trial-environment.js';
import { temporaryDirectory } from '../support/fixtures.js';

const directory = temporaryDirectory('mass-workdir-');
afterAll(() => directory.remove());

/** An environment whose hand-backs are only recorded. */
function environment(workdir: string) {
  const asked: string[] = [];
  return {
    asked,
    workdir,
    getFiles: async (inside: string) => {
      asked.push(inside);
      return null;
    },
  };
}

describe("a trial's working folder handed back", () => {
  it('is the image WORKDIR when it has one', async () => {
    const app = environment('/app');
    await handBackWorkdir(app, join(directory.path, 'app'));
    expect(app.asked).toEqual(['/app']);
    expect(readdirSync(join(directory.path, 'app'))).toEqual([]);
  });

  it('is nothing for an image without a WORKDIR: its commands start at /, the whole image, never copied to the run', async () => {
    const root = environment('/');
    const folder = join(directory.path, 'root');
    expect(await handBackWorkdir(root, folder)).toBeNull();
    expect(root.asked).toEqual([]);
    expect(existsSync(folder)).toBe(true);
    expect(readdirSync(folder)).toEqual([]);
  });
});
