import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { describeDataFile, SAMPLE_ROWS } from '../../src/judge/data-sample.js';
import { DEFAULT_BUNDLE_BUDGET } from '../../src/judge/index.js';
import {
  bundleOf,
  removeScratchDirectories,
  scratch,
  tinySumTask,
  tinySumWorkspace,
  tokenCounter,
} from './support.js';

afterAll(removeScratchDirectories);

/** A dose table with what a pharmacometrician looks for first: a negative response and a value below the limit. */
const DOSES = [
  'dose_uM,response',
  '0.01,-2.10',
  '0.03,1.5',
  '0.1,4.0',
  '0.3,11.2',
  '1,30.5',
  '3,61.0',
  '10,85.3',
  '30,96.1',
  '100,<LOQ',
  '300,',
].join('\n');

describe("the task's input data, sampled", () => {
  it('gives a table its shape, a summary of each column and its first rows', () => {
    const sample = describeDataFile('data/doses.csv', { kind: 'whole', text: `${DOSES}\n` });
    expect(sample).toContain('10 rows × 2 columns');
    expect(sample).toContain('- `dose_uM`: 10 numbers from 0.01 to 300');
    expect(sample).toContain(
      '- `response`: 8 numbers from -2.1 to 96.1 (1 below zero), 1 other values (such as "<LOQ"), 1 empty',
    );
    // The header and the first rows, the suspicious one among them, exactly as in the file.
    const lines = sample.split('\n');
    const head = lines.slice(lines.indexOf('dose_uM,response'));
    expect(head).toEqual(DOSES.split('\n').slice(0, SAMPLE_ROWS + 1));
    expect(head).toContain('0.01,-2.10');
  });

  it('describes JSON by its shape and other text by its first lines', () => {
    const array = JSON.stringify(Array.from({ length: 20 }, (_, index) => ({ id: index, value: index * 2 })));
    expect(describeDataFile('data/items.json', { kind: 'whole', text: array })).toMatch(
      /^A JSON array of 20 items × 2 keys \(`id`, `value`\); the first 8:\n\{"id":0,"value":0\}/,
    );
    const notes = Array.from({ length: 30 }, (_, index) => `note ${index}`).join('\n');
    const text = describeDataFile('data/README.md', { kind: 'whole', text: notes });
    expect(text.split('\n')).toEqual(['30 lines; the first 12:', ...notes.split('\n').slice(0, 12)]);
  });

  it('is in the bundle, the same for the same data, and within its budget however large the table', async () => {
    const root = await scratch('data');
    const task = await tinySumTask();
    const rows = Array.from({ length: 20_000 }, (_, index) => `${index},${(index * 7919) % 1000}.5`);
    const big = `x,y\n${rows.join('\n')}\n`;
    const make = async (name: string) =>
      bundleOf(task, await tinySumWorkspace(path.join(root, name), { files: { 'data/numbers.csv': big } }));
    const [first, second] = [await make('one'), await make('two')];
    const section = first.summary.sections.find((item) => item.name === 'data')!;
    expect(section).toMatchObject({ itemsShown: 1, itemsNotShown: 0 });
    expect(section.tokens).toBeLessThanOrEqual(DEFAULT_BUNDLE_BUDGET.dataTokens);
    const counter = await tokenCounter();
    const excerpt = first.excerpts.find((item) => item.path === 'data/numbers.csv')!;
    expect(counter.count(excerpt.text)).toBeLessThanOrEqual(DEFAULT_BUNDLE_BUDGET.dataFileTokens);
    expect(excerpt.text).toContain('20,000 rows × 2 columns');
    expect(excerpt.text).toContain('0,0.5\n1,919.5');
    // Two workspaces with the same data show the same sample, byte for byte; the task's script is not sampled.
    expect(second.excerpts.find((item) => item.path === 'data/numbers.csv')).toEqual(excerpt);
    expect(first.text).toContain("### The task's input data (a sample)");
    expect(first.text).not.toMatch(/#### `simulate\.py` \(task input/);
  });
});
