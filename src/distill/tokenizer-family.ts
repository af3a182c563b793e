import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { UserError } from '../errors.js';
import { defaultModelDirectory } from './chat-template-model.js';
import type { TokenizerCheckResult } from '../records/tokenizer-check.js';

/**
 * Which tokenizer a model uses, told from names: the training data's token ids are only the served model's own when
 * the model directory that made them belongs to the same family. Families are the Qwen generations that share one
 * vocabulary: `qwen2` (Qwen2, Qwen2.5), `qwen3` (Qwen3 and its Coder, VL and Next models), `qwen3.5` (Qwen3.5 and
 * Qwen3.6, one new vocabulary). Any other name belongs to no known family.
 */
export function familyOfModelName(name: string): string | undefined {
  const version = /qwen(\d+(?:\.\d+)?)/.exec(path.posix.basename(name.toLowerCase()))?.[1];
  if (version === undefined) return undefined;
  if (version === '2' || version === '2.5') return 'qwen2';
  if (version === '3.5' || version === '3.6') return 'qwen3.5';
  return `qwen${version}`;
}

/** transformers' `model_type` of each family's architectures, as `config.json` declares it. */
const MODEL_TYPES: Record<string, string> = {
  qwen2: 'qwen2',
  qwen2_moe: 'qwen2',
  qwen2_vl: 'qwen2',
  qwen2_5_vl: 'qwen2',
  qwen3: 'qwen3',
  qwen3_moe: 'qwen3',
  qwen3_next: 'qwen3',
  qwen3_vl: 'qwen3',
  qwen3_vl_moe: 'qwen3',
  qwen3_5: 'qwen3.5',
  qwen3_5_moe: 'qwen3.5',
};

export interface DirectoryFamily {
  /** What the family was told from, for messages. */
  declared: string;
  family: string | undefined;
}

/**
 * A model directory's family, from what it declares: `model_type` in `config.json`, else the name it was saved
 * from (`name_or_path` in `tokenizer_config.json`, `_name_or_path` in `config.json`), else the directory's own name.
 * No directory: the default, Qwen3's tokenizer.
 */
export async function familyOfModelDirectory(modelDirectory: string | undefined): Promise<DirectoryFamily> {
  if (modelDirectory === undefined) {
    return { declared: `Qwen3's tokenizer (the default, ${defaultModelDirectory()})`, family: 'qwen3' };
  }
  const directory = path.resolve(modelDirectory);
  const config = await readOptionalJson(path.join(directory, 'config.json'));
  const modelType = typeof config?.model_type === 'string' ? config.model_type : undefined;
  if (modelType !== undefined && modelType in MODEL_TYPES) {
    return { declared: `${directory} (model_type "${modelType}")`, family: MODEL_TYPES[modelType] };
  }
  const tokenizerConfig = await readOptionalJson(path.join(directory, 'tokenizer_config.json'));
  for (const name of [tokenizerConfig?.name_or_path, config?._name_or_path, path.basename(directory)]) {
    if (typeof name !== 'string') continue;
    const family = familyOfModelName(name);
    if (family !== undefined) return { declared: `${directory} (named "${name}")`, family };
  }
  return { declared: directory, family: undefined };
}

export interface TokenizerCheck {
  /** The training data's model directory; undefined for the default (Qwen3's). */
  modelDirectory: string | undefined;
  /** The names the trajectories' model was served under (or the base model's name, for trained generations). */
  servedModels: readonly string[];
  /** Build anyway (the user knows the vocabularies are the same). */
  allowMismatch?: boolean;
}

/**
 * Refuses a tokenizer of another family than the served model's name (Qwen3's files for Qwen3.6, say) unless
 * `allowMismatch`; says what it compared, for the data's statistics. Where a family is unknown (a model served
 * under a name of its own) nothing can be compared: the build goes on, recorded as `unverified`.
 */
export async function checkTrainingTokenizer(check: TokenizerCheck): Promise<TokenizerCheckResult> {
  const directory = await familyOfModelDirectory(check.modelDirectory);
  const served = [...new Set(check.servedModels)].map((model) => ({
    model,
    family: familyOfModelName(model) ?? null,
  }));
  const comparable = directory.family !== undefined;
  const other = comparable
    ? served.find((entry) => entry.family !== null && entry.family !== directory.family)
    : undefined;
  if (other && !check.allowMismatch) {
    throw new UserError(
      `the training data's tokenizer, ${directory.declared} (family ${directory.family}), is not that of the ` +
        `served model "${other.model}" (family ${other.family}): the token ids would not be the model's. Pass the ` +
        "model's own directory (--model-dir, or rsi.modelDirectory in a run configuration), or, if the two share " +
        'one vocabulary, --allow-tokenizer-mismatch (rsi.allowTokenizerMismatch: true).',
    );
  }
  const verdict = other
    ? 'mismatch-allowed'
    : comparable && served.every((entry) => entry.family !== null)
      ? 'same-family'
      : 'unverified';
  return { declared: directory.declared, family: directory.family ?? null, served, verdict };
}

async function readOptionalJson(file: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    throw new UserError(`${file}: not valid JSON; fix or remove it`);
  }
}
