import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Template } from '@huggingface/jinja';

import {
  defaultModelDirectory,
  loadChatTemplateModel,
  type ChatTemplateModel,
} from '../../src/distill/index.js';

/** The fixture's own files: its chat template and its tokenizer configuration with its special tokens. */
export const qwen35StyleFixture = fileURLToPath(new URL('../fixtures/qwen3.5-style', import.meta.url));
const FILES = ['chat_template.jinja', 'tokenizer_config.json'];

interface AddedToken {
  content: string;
  special: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  single_word: boolean;
}

/**
 * A complete model directory of the Qwen3.5-style fixture: its template and configuration, and Qwen3's byte-level
 * BPE with the fixture's added tokens in place of Qwen3's. Written once per fixture version into the temporary
 * folder (atomically, so test files running at once share it).
 */
export function qwen35StyleDirectory(): string {
  const sources = FILES.map((file) => readFileSync(join(qwen35StyleFixture, file), 'utf8'));
  const hash = createHash('sha256').update(sources.join('\0')).digest('hex').slice(0, 12);
  const directory = join(tmpdir(), `mass-qwen3.5-style-${hash}`);
  if (existsSync(join(directory, 'tokenizer.json'))) return directory;

  const config = JSON.parse(sources[1]!) as { added_tokens_decoder: Record<string, AddedToken> };
  const tokenizer = JSON.parse(readFileSync(join(defaultModelDirectory(), 'tokenizer.json'), 'utf8')) as {
    added_tokens: unknown[];
  };
  tokenizer.added_tokens = Object.entries(config.added_tokens_decoder).map(([id, token]) => ({
    id: Number(id),
    ...token,
  }));
  const partial = `${directory}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  FILES.forEach((file, index) => writeFileSync(join(partial, file), sources[index]!));
  writeFileSync(join(partial, 'tokenizer.json'), JSON.stringify(tokenizer));
  try {
    renameSync(partial, directory);
  } catch (error) {
    // Another test file wrote it first.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(join(directory, 'tokenizer.json'))) throw error;
  }
  return directory;
}

let model: Promise<ChatTemplateModel> | undefined;
/** The fixture's template and tokenizer, loaded once per test file. */
export function qwen35Style(): Promise<ChatTemplateModel> {
  return (model ??= loadChatTemplateModel(qwen35StyleDirectory()));
}

/** The fixture's chat template on its own, straight from its file: the reference the builder's text is compared with. */
export function qwen35StyleReferenceTemplate(): Template {
  return new Template(readFileSync(join(qwen35StyleFixture, 'chat_template.jinja'), 'utf8'));
}
