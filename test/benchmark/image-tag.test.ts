import { describe, expect, it } from 'vitest';

import { imageTag } from '../../src/benchmark/task-environment.js';

// A task's image was built under `mass-harbor/<name>:local`: a task of the same name in another dataset (a hostile
// one, another run's) built over it, and a resumed run then ran its trusted task's trials in that image. The tag now
// holds a digest of the task's folder (and trials run the image by the ID its build gave).
describe("a task's image tag", () => {
  const tag = /^mass-harbor\/[a-z0-9]+(-[a-z0-9]+)*-[0-9a-f]{12}:local$/;

  it('differs between tasks of the same name in different folders, and is stable for one folder', () => {
    const trusted = imageTag({ name: 'count-log-errors', dir: '/data/mass-containers/count-log-errors' });
    const other = imageTag({ name: 'count-log-errors', dir: '/tmp/hostile/count-log-errors' });
    expect(trusted).toMatch(tag);
    expect(trusted).toMatch(/^mass-harbor\/count-log-errors-/);
    expect(other).not.toBe(trusted);
    expect(imageTag({ name: 'count-log-errors', dir: '/data/mass-containers/count-log-errors' })).toBe(
      trusted,
    );
  });

  it('is a name the engine takes, whatever letters the folder uses', () => {
    for (const name of ['Fix..Git_', 'A', '_x_', 'polyglot.rust.c', 'a-'.repeat(60)]) {
      expect(imageTag({ name, dir: `/d/${name}` })).toMatch(tag);
    }
    expect(imageTag({ name: 'Fix..Git_', dir: '/d/x' })).toMatch(/^mass-harbor\/fix-git-/);
  });
});
