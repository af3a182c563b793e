// The layers of src/: each top-level folder may import only folders below it, never one above, and no product file
// may import the test infrastructure in src/testing/. Read from the source text, so it holds for type imports too.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

import { LAYERS, TESTING } from './layer-table.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** The package's export barrel: it re-exports every layer. */
const EXEMPT = new Set(['index.ts']);
const ROOT = '(root)';

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx|mts|cts|js|mjs)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [full] : [];
  });
}

/** The top-level folder under src/ a path lies in, ROOT for a file directly in src/, null outside src/. */
function folderOf(file: string): string | null {
  const relative = path.relative(SRC, file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null;
  const parts = relative.split(path.sep);
  return parts.length === 1 ? ROOT : parts[0]!;
}

function rank(folder: string): number {
  return folder === ROOT ? -1 : LAYERS.indexOf(folder);
}

/** Every relative module specifier in a file: import/export … from, side-effect imports, import(), require(). */
function relativeImports(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles.map((reference) => reference.fileName).filter((name) => name.startsWith('.'));
}

interface Violation {
  file: string;
  specifier: string;
  reason: string;
}

function violations(): Violation[] {
  const found: Violation[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file)!;
    if (from === TESTING || (from === ROOT && EXEMPT.has(path.basename(file)))) continue;
    const name = path.relative(SRC, file).split(path.sep).join('/');
    for (const specifier of relativeImports(file)) {
      const target = path.resolve(path.dirname(file), specifier);
      const to = folderOf(target);
      if (to === null) {
        const outside = path.relative(path.dirname(SRC), target).split(path.sep)[0];
        if (outside === 'test') found.push({ file: name, specifier, reason: 'imports test/ (test code)' });
        continue;
      }
      if (to === from) continue;
      if (to === TESTING)
        found.push({ file: name, specifier, reason: 'imports src/testing/ (test infrastructure)' });
      else if (rank(to) >= rank(from))
        found.push({ file: name, specifier, reason: `${from} imports ${to}, a layer above` });
    }
  }
  return found;
}

describe('the layers of src/', () => {
  it('has every top-level folder in the layer table', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    const unknown = folders.filter((folder) => folder !== TESTING && !LAYERS.includes(folder));
    expect(
      unknown,
      'src/ has folders the layer table in test/architecture/layer-table.ts does not place',
    ).toEqual([]);
  });

  it('imports only down a layer, and never the test infrastructure', () => {
    const found = violations();
    const message = [
      `${found.length} import(s) break the layering (bottom to top: root files, ${LAYERS.join(' → ')}):`,
      ...found.map((violation) => `  src/${violation.file} → ${violation.specifier}: ${violation.reason}`),
    ].join('\n');
    expect(found.length === 0 ? '' : message).toBe('');
  });
});
