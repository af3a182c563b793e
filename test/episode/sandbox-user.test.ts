import { lchownSync, lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { handBack } from '../../src/episode/sandbox-user.js';
import { temporaryDirectory } from '../support/fixtures.js';

const removals: Array<() => void> = [];
afterEach(() => removals.splice(0).forEach((remove) => remove()));

/** A uid no account has, as a sandbox's own user would be. */
const SANDBOX = { uid: 2 ** 31 - 2 ** 20, gid: 2 ** 31 - 2 ** 20 };
const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)("handing a sandbox user's files back (as root)", () => {
  it('hands back what the agents made under names that are not UTF-8, and what lies inside such folders', () => {
    const made = temporaryDirectory();
    removals.push(made.remove);
    const root = join(made.path, 'workspace');
    mkdirSync(root);
    const folder = Buffer.from(`${root}/results-\xff`, 'latin1');
    const inside = Buffer.concat([folder, Buffer.from('/table-\xfe.csv', 'latin1')]);
    const plain = join(root, 'report.md');
    mkdirSync(folder);
    writeFileSync(inside, 'a,b\n');
    writeFileSync(plain, '# report\n');
    for (const path of [root, folder, inside, plain]) lchownSync(path, SANDBOX.uid, SANDBOX.gid);

    const skipped = handBack([root], SANDBOX, { uid: 0, gid: 0 });

    expect(skipped).toBe(0);
    expect([root, folder, inside, plain].map((path) => lstatSync(path).uid)).toEqual([0, 0, 0, 0]);
  });
});
