import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { Sandbox } from '../../src/episode/sandbox.js';
import { temporaryDirectory } from '../support/fixtures.js';

/** Paths relative to a temporary directory holding `workspace/data/` and `outside.txt`. */
interface Case {
  workspace?: string;
  readOnlyPaths?: string[];
  hiddenDirectories?: string[];
  proxySocketPath?: string;
}

describe('sandbox options that cannot work are refused, saying why', () => {
  it.each<[string, Case, RegExp]>([
    ['a missing workspace', { workspace: 'missing' }, /the workspace .*missing does not exist/],
    [
      'a protected path that does not exist',
      { readOnlyPaths: ['data/none.csv'] },
      /protected path data\/none.csv does not exist/,
    ],
    [
      'a protected path outside the workspace',
      { readOnlyPaths: ['../outside.txt'] },
      /protected path ..\/outside.txt is not inside the workspace/,
    ],
    [
      'a hidden directory inside the workspace',
      { hiddenDirectories: ['workspace/data'] },
      /cannot hide .*workspace\/data: it lies inside/,
    ],
    [
      'a proxy socket in a missing directory',
      { proxySocketPath: 'nowhere/proxy.sock' },
      /the proxy socket directory .*nowhere does not exist/,
    ],
  ])('%s', async (_case, options, message) => {
    const directory = temporaryDirectory();
    try {
      mkdirSync(join(directory.path, 'workspace', 'data'), { recursive: true });
      writeFileSync(join(directory.path, 'outside.txt'), 'outside');
      const inDirectory = (path: string): string => join(directory.path, path);
      const opening = Sandbox.open({
        mode: 'bubblewrap',
        stateDirectory: inDirectory('sandbox'),
        workspace: inDirectory(options.workspace ?? 'workspace'),
        readOnlyPaths: options.readOnlyPaths,
        hiddenDirectories: options.hiddenDirectories?.map(inDirectory),
        proxySocketPath: options.proxySocketPath && inDirectory(options.proxySocketPath),
      });
      await expect(opening).rejects.toThrow(UserError);
      await expect(opening).rejects.toThrow(message);
    } finally {
      directory.remove();
    }
  });
});
