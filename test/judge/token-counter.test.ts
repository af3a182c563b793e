import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { Tokenizer } from '@huggingface/tokenizers';
import { afterAll, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { omittedTokensMarker, shrinkToTokens } from '../../src/judge/index.js';
import { defaultTokenizerDirectory, loadTokenCounter } from '../../src/model/token-counter.js';
import { removeScratchDirectories, scratch } from './support.js';

const numberedLines = (count: number) =>
  Array.from(
    { length: count },
    (_, index) => `line ${index}: pass_rate ${(index / count).toFixed(3)} on scenario ${index % 40}`,
  ).join('\n');

afterAll(removeScratchDirectories);

describe('the token counter', () => {
  it('loads Qwen3’s tokenizer once per process and counts real tokens', async () => {
    const counter = await loadTokenCounter();
    expect(await loadTokenCounter()).toBe(counter);
    expect(counter.name).toBe('qwen3 (default)');
    expect(counter.count('')).toBe(0);
    expect(counter.encode('hello world')).toEqual([14990, 1879]);
    expect(counter.count('<|im_start|>user')).toBe(2);
  });

  it('gives exactly the ids of encoding a long text whole, and decodes them back', async () => {
    const counter = await loadTokenCounter();
    const directory = defaultTokenizerDirectory();
    const reference = new Tokenizer(
      JSON.parse(await readFile(path.join(directory, 'tokenizer.json'), 'utf8')),
      JSON.parse(await readFile(path.join(directory, 'tokenizer_config.json'), 'utf8')),
    );
    const text = [
      numberedLines(300),
      '```python\ndef f(x):\n    return {"a": [1, 2.5e-3]}\n```',
      '“Quoted” — text with émojis 😀 and 日本語\r\n\tindented\n\n\n  spaced',
      await readFile(new URL(import.meta.url), 'utf8'),
    ]
      .join('\n')
      .repeat(3);
    expect(text.length).toBeGreaterThan(30_000);
    const ids = counter.encode(text);
    expect(ids).toEqual(reference.encode(text, { add_special_tokens: false }).ids);
    expect(counter.decode(ids)).toBe(text);
  });

  it('names the problem when a tokenizer directory is unusable', async () => {
    const empty = await scratch('tokenizer');
    await expect(loadTokenCounter(empty)).rejects.toThrow(UserError);
    await expect(loadTokenCounter(empty)).rejects.toThrow(
      /tokenizer\.json: cannot read it .*a model directory holds tokenizer\.json/,
    );
  });
});

describe('cutting text to a token budget', () => {
  it('leaves text that fits alone', async () => {
    const counter = await loadTokenCounter();
    expect(shrinkToTokens(counter, 'short text', 100)).toEqual({
      text: 'short text',
      tokens: 2,
      truncated: false,
    });
  });

  it('keeps whole lines at head and tail and says how many tokens it left out', async () => {
    const counter = await loadTokenCounter();
    const text = numberedLines(2000);
    const total = counter.count(text);
    const excerpt = shrinkToTokens(counter, text, 500, 0.6);
    expect(excerpt.truncated).toBe(true);
    expect(excerpt.tokens).toBe(counter.count(excerpt.text));
    expect(excerpt.tokens).toBeLessThanOrEqual(500);
    expect(excerpt.tokens).toBeGreaterThan(450);
    const [head, tail] = excerpt.text.split(/\n?\[… [\d,]+ tokens omitted …\]\n/);
    expect(head!.startsWith('line 0: ')).toBe(true);
    expect(tail!.endsWith('line 1999: pass_rate 1.000 on scenario 39')).toBe(true);
    expect(text.startsWith(head!)).toBe(true);
    expect(text.endsWith(tail!)).toBe(true);
    expect(tail!).toMatch(/^line \d+:/);
    const omitted = Number(/\[… ([\d,]+) tokens omitted …\]/.exec(excerpt.text)![1]!.replace(/,/g, ''));
    expect(Math.abs(omitted - (total - counter.count(head!) - counter.count(tail!)))).toBeLessThanOrEqual(2);
    expect(counter.count(head!)).toBeGreaterThan(counter.count(tail!));
  });

  it('never splits a character and falls back to the marker alone when there is no room', async () => {
    const counter = await loadTokenCounter();
    const emoji = '😀日本語'.repeat(500);
    const excerpt = shrinkToTokens(counter, emoji, 100);
    expect(excerpt.text).not.toContain('\uFFFD');
    expect(excerpt.tokens).toBeLessThanOrEqual(100);
    const tiny = shrinkToTokens(counter, emoji, 10);
    expect(tiny.text).toBe(omittedTokensMarker(counter.count(emoji)));
  });
});
