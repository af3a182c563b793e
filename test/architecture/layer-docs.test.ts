// docs/how-mass-works.md lists the layers of src/ for readers; this keeps its table the layering test's own.
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { LAYERS } from './layer-table.js';

const DOC = new URL('../../docs/how-mass-works.md', import.meta.url);

/** The folders of the table under "## The parts", in the order its rows give them. */
function documentedLayers(markdown: string): string[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('The parts\n'));
  if (section === undefined) throw new Error('docs/how-mass-works.md has no "## The parts" section');
  return [...section.matchAll(/^\| `src\/([^/`]+)\/` \|/gm)].map((match) => match[1]!);
}

describe('the layer table of docs/how-mass-works.md', () => {
  it('reads the folders of a table and nothing else', () => {
    const markdown = [
      '## Before',
      '| `src/nope/` | not this section |',
      '## The parts',
      '',
      '| folder | part |',
      '| --- | --- |',
      '| `src/html/` | escaping |',
      '| `src/store/` | the run directory |',
      '',
      '`src/testing/` is test infrastructure.',
      '## After',
      '| `src/later/` | nor this one |',
    ].join('\n');
    expect(documentedLayers(markdown)).toEqual(['html', 'store']);
    expect(() => documentedLayers('# no parts here')).toThrow('no "## The parts" section');
  });

  it('lists the layers of test/architecture/layer-table.ts, bottom first', () => {
    expect(
      documentedLayers(readFileSync(DOC, 'utf8')),
      'docs/how-mass-works.md "The parts" must list every folder of LAYERS (test/architecture/layer-table.ts) in order',
    ).toEqual(LAYERS);
  });
});
