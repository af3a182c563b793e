import { createHash } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { z } from 'zod';

import { baseUrlProblem } from '../config/base-url.js';
import { SystemError, UserError, errorMessage } from '../errors.js';
import { readValidJsonLines } from '../store/json-lines.js';
import { embeddingCachePath } from '../store/run-paths.js';
import { runAnalysisScript } from './analysis-script.js';
import type { EmbeddingMethod } from '../records/embedding-method.js';

export interface Embeddings {
  /** One vector per text, in the order given. */
  vectors: number[][];
  method: EmbeddingMethod;
}

/** Turns texts into vectors. */
export interface Embedder {
  embed(texts: readonly string[]): Promise<Embeddings>;
}

/** The hash a text is cached under. */
export function textHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The offline embedding's size before the analysis reduces it further. */
export const OFFLINE_DIMENSIONS = 64;

/**
 * The built-in offline embedding: TF-IDF of words and word pairs, reduced by a truncated SVD (scikit-learn, seeded)
 * and normalised, fit on the texts of one analysis together. No model, no network; the same texts give the same
 * vectors in any order, since they are fit in the order of their hashes. It measures shared wording, not meaning:
 * an endpoint's embedding model is the paper's measure.
 */
export function offlineEmbedder(dimensions = OFFLINE_DIMENSIONS): Embedder {
  return {
    async embed(texts) {
      const distinct = [...new Set(texts)].map((text) => ({ text, hash: textHash(text) }));
      distinct.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
      const output = OfflineOutput.parse(
        await runAnalysisScript('embed-offline', { texts: distinct.map((entry) => entry.text), dimensions }),
      );
      const byText = new Map(distinct.map((entry, index) => [entry.text, output.vectors[index]!]));
      return {
        vectors: texts.map((text) => byText.get(text)!),
        method: {
          kind: 'offline',
          name: `TF-IDF + truncated SVD (scikit-learn, offline; ${output.dimensions} dimensions fit on this analysis’s ${distinct.length} texts)`,
          model: null,
          endpoint: null,
          dimensions: output.dimensions,
        },
      };
    },
  };
}

const OfflineOutput = z.object({
  dimensions: z.number().int().positive(),
  vectors: z.array(z.array(z.number())),
});

interface EndpointEmbedderOptions {
  /** An OpenAI-compatible base URL (e.g. `http://localhost:8000/v1`): `<base>/embeddings` and `<base>/models`. */
  baseUrl: string;
  /** The embedding model; default: the endpoint's only model. */
  model?: string;
  apiKey?: string;
  /** The run directory, whose `analysis/embeddings/` caches every vector by the hash of its text. */
  runDirectory: string;
  /** Texts per request (default 32). */
  batchSize?: number;
  /** Per request (default 120 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const EmbeddingsResponse = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
});
const ModelsResponse = z.object({ data: z.array(z.object({ id: z.string() })) });
const CacheLine = z.object({ hash: z.string(), vector: z.array(z.number()) });

/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint (vLLM serves embedding models, as do OpenAI and
 * others), cached in the run directory per model and text hash: a text is sent once, and an analysis run again,
 * or killed and run again, sends only what is not cached yet.
 */
export function endpointEmbedder(options: EndpointEmbedderOptions): Embedder {
  const problem = baseUrlProblem(options.baseUrl, 'openai-compatible');
  if (problem !== null) throw new UserError(`--embeddings ${problem}`);
  const base = options.baseUrl.replace(/\/+$/, '');
  const send = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const shown = shownUrl(base);

  async function call(path: string, body?: unknown): Promise<unknown> {
    let lastProblem = '';
    for (let attempt = 0; attempt < 4; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
      let response: Response;
      try {
        response = await send(`${base}${path}`, {
          method: body === undefined ? 'GET' : 'POST',
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        lastProblem = errorMessage(error);
        continue;
      }
      const text = await response.text();
      if (response.ok) {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new SystemError(
            `${shown}${path} answered with something that is not JSON: ${text.slice(0, 200)}`,
          );
        }
      }
      lastProblem = `HTTP ${response.status}: ${text.slice(0, 300)}`;
      if (response.status !== 429 && response.status < 500) {
        throw new UserError(`${shown}${path} refused the request (${lastProblem})`);
      }
    }
    throw new SystemError(`${shown}${path} did not answer after 4 attempts (${lastProblem})`);
  }

  async function chosenModel(): Promise<string> {
    if (options.model) return options.model;
    const parsed = ModelsResponse.safeParse(await call('/models'));
    if (!parsed.success) throw new SystemError(`${shown}/models did not answer with a model list`);
    const ids = parsed.data.data.map((entry) => entry.id);
    if (ids.length === 1) return ids[0]!;
    throw new UserError(
      ids.length === 0
        ? `${shown} serves no model: start it with an embedding model`
        : `${shown} serves several models (${ids.join(', ')}): give the embedding model with --embeddings-model`,
    );
  }

  return {
    async embed(texts) {
      if (texts.length === 0) throw new UserError('there is no text to embed');
      const model = await chosenModel();
      const cacheFile = join(
        options.runDirectory,
        embeddingCachePath(
          `${model.replace(/[^A-Za-z0-9._-]+/g, '_')}-${textHash(`${base}\n${model}`).slice(0, 12)}`,
        ),
      );
      const cached = new Map<string, number[]>();
      const stored = await readValidJsonLines(cacheFile, CacheLine);
      for (const line of stored.values) cached.set(line.hash, line.vector);
      // A line cut off by a kill is skipped; what is appended starts on a line of its own.
      let lead = stored.read?.unfinishedLastLine ? '\n' : '';
      const missing = [...new Set(texts.map(textHash))].filter((hash) => !cached.has(hash));
      const textOf = new Map(texts.map((text) => [textHash(text), text]));
      const batchSize = options.batchSize ?? 32;
      await mkdir(dirname(cacheFile), { recursive: true });
      for (let start = 0; start < missing.length; start += batchSize) {
        const hashes = missing.slice(start, start + batchSize);
        const parsed = EmbeddingsResponse.safeParse(
          await call('/embeddings', { model, input: hashes.map((hash) => textOf.get(hash)!) }),
        );
        if (!parsed.success || parsed.data.data.length !== hashes.length) {
          throw new SystemError(`${shown}/embeddings did not answer with one embedding per text`);
        }
        const lines: string[] = [];
        for (const entry of parsed.data.data) {
          const hash = hashes[entry.index];
          if (hash === undefined || entry.embedding.length === 0 || !entry.embedding.every(Number.isFinite)) {
            throw new SystemError(
              `${shown}/embeddings answered with an embedding that is empty, not finite or out of place`,
            );
          }
          cached.set(hash, entry.embedding);
          lines.push(JSON.stringify({ hash, vector: entry.embedding }));
        }
        await appendFile(cacheFile, `${lead}${lines.join('\n')}\n`);
        lead = '';
      }
      const vectors = texts.map((text) => cached.get(textHash(text))!);
      const dimensions = vectors[0]?.length ?? 0;
      if (vectors.some((vector) => vector.length !== dimensions)) {
        throw new SystemError(
          `${shown} gave embeddings of different sizes for ${model}; delete ${cacheFile} if the model changed, and run again`,
        );
      }
      return {
        vectors,
        method: {
          kind: 'endpoint',
          name: `${model} at ${shown} (${dimensions} dimensions)`,
          model,
          endpoint: shown,
          dimensions,
        },
      };
    },
  };
}

/** The address as it may be shown: a password in it masked. */
function shownUrl(base: string): string {
  const url = new URL(base);
  if (url.password !== '') url.password = '***';
  return url.href.replace(/\/+$/, '');
}
