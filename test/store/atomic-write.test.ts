import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { temporaryDirectory } from './__fixtures__/test-run.js';
import { writeFileAtomic, writeFileAtomicSync } from '../../src/store/atomic-write.js';

describe('writeFileAtomic', () => {
  it('creates parent folders and leaves only the target file', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'episodes', 'e1', 'episode.json');

    await writeFileAtomic(path, '{"a":1}\n');

    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n');
    expect(readdirSync(join(directory, 'episodes', 'e1'))).toEqual(['episode.json']);
  });

  it('replaces existing content, and concurrent writers leave one complete version and no temp files', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'ranking.json');
    const versions = Array.from({ length: 20 }, (_, index) => `version ${index} `.repeat(1000));

    await Promise.all(versions.map((content) => writeFileAtomic(path, content)));

    expect(versions).toContain(readFileSync(path, 'utf8'));
    expect(readdirSync(directory)).toEqual(['ranking.json']);
  });

  it('removes its temp file when the rename fails', async () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'taken');
    mkdirSync(join(path, 'not-empty'), { recursive: true });

    await expect(writeFileAtomic(path, 'data')).rejects.toThrow();

    expect(readdirSync(directory)).toEqual(['taken']);
  });
});

describe('writeFileAtomicSync', () => {
  it('writes bytes and leaves no temp files, also when it fails', () => {
    const directory = temporaryDirectory();
    const path = join(directory, 'nested', 'data.bin');

    writeFileAtomicSync(path, new Uint8Array([1, 2, 3]));
    writeFileAtomicSync(path, new Uint8Array([4, 5]));
    mkdirSync(join(directory, 'nested', 'folder', 'inner'), { recursive: true });

    expect(() => writeFileAtomicSync(join(directory, 'nested', 'folder'), 'data')).toThrow();
    expect([...readFileSync(path)]).toEqual([4, 5]);
    expect(readdirSync(join(directory, 'nested')).sort()).toEqual(['data.bin', 'folder']);
  });
});
