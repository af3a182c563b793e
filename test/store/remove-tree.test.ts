import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { removeTree } from '../../src/store/remove-tree.js';
import { temporaryDirectory } from '../support/fixtures.js';

const removals: Array<() => void> = [];
afterEach(() => removals.splice(0).forEach((remove) => remove()));

/**
 * A tree nested `levels` deep under `root/tree`, each folder's name 200 bytes, with a file (and a name that is not
 * UTF-8) at the bottom: built from the bottom up by renames of short paths, as agent code can (`mkdir x; cd x` in a
 * loop), so that no call here names a path past PATH_MAX.
 */
async function deepTree(root: string, levels: number): Promise<string> {
  const name = 'd'.repeat(200);
  await mkdir(join(root, 'bottom'));
  await writeFile(join(root, 'bottom', 'result.txt'), 'x');
  await writeFile(Buffer.from(`${join(root, 'bottom')}/bad-\xff`, 'latin1'), 'x');
  let current = join(root, 'bottom');
  for (let level = 0; level < levels; level++) {
    const parent = join(root, `level-${level}`);
    await mkdir(parent);
    await rename(current, join(parent, name));
    current = parent;
  }
  await rename(current, join(root, 'tree'));
  return join(root, 'tree');
}

describe('removeTree', () => {
  it("removes a tree deeper than PATH_MAX, which Node's own rm refuses", async () => {
    const made = temporaryDirectory();
    removals.push(made.remove);
    const tree = await deepTree(made.path, 30);
    await expect(rm(tree, { recursive: true, force: true })).rejects.toMatchObject({ code: 'ENAMETOOLONG' });
    // Something the agent left where a flattened folder might go is no obstacle.
    await writeFile(join(tree, '.mass-flattened-0'), 'in the way');
    await removeTree(tree);
    expect(existsSync(tree)).toBe(false);
  });

  it('removes an ordinary tree, and nothing when there is none', async () => {
    const made = temporaryDirectory();
    removals.push(made.remove);
    await mkdir(join(made.path, 'a', 'b'), { recursive: true });
    await removeTree(join(made.path, 'a'));
    await removeTree(join(made.path, 'missing'));
    expect(existsSync(join(made.path, 'a'))).toBe(false);
  });
});
