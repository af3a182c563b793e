import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { Template } from '@huggingface/jinja';
import { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';
import {
  defaultTokenizerDirectory,
  loadTokenCounter,
  readModelDirectoryJson,
} from '../model/token-counter.js';
import { TURN_END, TURN_START } from './chatml-blocks.js';
import type { TemplateMessage } from './template-messages.js';

/**
 * A model's own chat format, from its directory: the Jinja chat template of `tokenizer_config.json` (rendered with
 * `@huggingface/jinja`, which follows transformers, `tojson` included) and the tokenizer of `tokenizer.json`.
 */
export interface ChatTemplateModel {
  /** The directory, or `qwen3 (default)`. */
  readonly name: string;
  /**
   * The template's text for the conversation; with `addGenerationPrompt`, followed by the prompt the server appends
   * before the model writes the next assistant turn (`<|im_start|>assistant\n`, for Qwen3.5/3.6 with `<think>\n`).
   */
  render(
    messages: readonly TemplateMessage[],
    tools: readonly unknown[],
    options?: { addGenerationPrompt?: boolean },
  ): string;
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
}

const NamedTemplate = z.object({ name: z.string(), template: z.string() });
const TokenizerConfig = z.looseObject({
  chat_template: z.union([z.string(), z.array(NamedTemplate)]).optional(),
});

/** The folder holding Qwen3's `tokenizer.json` and `tokenizer_config.json` (the package's files, not its engine). */
export const defaultModelDirectory = defaultTokenizerDirectory;

const loaded = new Map<string, Promise<ChatTemplateModel>>();

/**
 * A model directory's chat template and tokenizer (a `chat_template.jinja` beside them wins, as in transformers),
 * loaded once per process and directory: loading takes a second or more.
 */
export function loadChatTemplateModel(modelDirectory?: string): Promise<ChatTemplateModel> {
  const directory = path.resolve(modelDirectory ?? defaultModelDirectory());
  let model = loaded.get(directory);
  if (!model) {
    model = readChatModel(directory, modelDirectory === undefined ? 'qwen3 (default)' : directory);
    loaded.set(directory, model);
    // A failed load is not kept: the user may fix the directory and try again.
    model.catch(() => loaded.delete(directory));
  }
  return model;
}

async function readChatModel(directory: string, name: string): Promise<ChatTemplateModel> {
  const config = await readModelDirectoryJson(path.join(directory, 'tokenizer_config.json'), TokenizerConfig);
  const source =
    (await readOptionalText(path.join(directory, 'chat_template.jinja'))) ?? chatTemplateOf(config);
  if (source === undefined) {
    throw new UserError(
      `${directory}: no chat template (neither chat_template.jinja nor "chat_template" in tokenizer_config.json); pass the directory of a chat model`,
    );
  }
  if (!source.includes(TURN_START)) {
    throw new UserError(
      `${directory}: the chat template is not in the ChatML format (${TURN_START} … ${TURN_END}) of the Qwen family, the only one the builder splits into turns`,
    );
  }
  // The tokenizer is the token counter's: one copy per process, and the same ids everywhere.
  const tokenizer = await loadTokenCounter(directory);
  let template: Template;
  try {
    template = new Template(source);
  } catch (error) {
    throw new UserError(`${directory}: the chat template could not be loaded (${errorMessage(error)})`, {
      cause: error,
    });
  }
  const specialTokens = Object.fromEntries(
    ['bos_token', 'eos_token', 'pad_token', 'unk_token'].map((key) => [key, specialTokenText(config[key])]),
  );
  return {
    name,
    render: (messages, tools, options) =>
      template.render({
        ...specialTokens,
        messages: messages as unknown as Record<string, unknown>[],
        tools: tools.length > 0 ? (tools as unknown[]) : undefined,
        add_generation_prompt: options?.addGenerationPrompt ?? false,
      }),
    encode: (text) => tokenizer.encode(text),
    decode: (ids) => tokenizer.decode(ids),
  };
}

function chatTemplateOf(config: z.infer<typeof TokenizerConfig>): string | undefined {
  const template = config.chat_template;
  if (typeof template === 'string' || template === undefined) return template;
  return (template.find((entry) => entry.name === 'default') ?? template[0])?.template;
}

/** Special tokens appear in configs as text or as `{content: text}`. */
function specialTokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (
    typeof value === 'object' &&
    value !== null &&
    'content' in value &&
    typeof value.content === 'string'
  ) {
    return value.content;
  }
  return undefined;
}

async function readOptionalText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
