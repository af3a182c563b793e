import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { endpointEmbedder, textHash } from '../../src/analyze/embeddings.js';
import { temporaryDirectory } from '../support/fixtures.js';

interface Seen {
  path: string;
  authorization: string | undefined;
  body: { model?: string; input?: string[] } | null;
}

/** An OpenAI-compatible embeddings server in this process: each text's vector is [length, vowels, 1]. */
function vectorOf(text: string): number[] {
  return [text.length, (text.match(/[aeiou]/g) ?? []).length, 1];
}

describe('embeddings from an OpenAI-compatible endpoint', () => {
  const directory = temporaryDirectory('mass-analyze-embeddings-');
  const seen: Seen[] = [];
  let models = ['embedder'];
  let failNext = 0;
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => {
        const body = text ? (JSON.parse(text) as Seen['body']) : null;
        seen.push({ path: request.url ?? '', authorization: request.headers.authorization, body });
        response.setHeader('content-type', 'application/json');
        if (failNext > 0) {
          failNext--;
          response.statusCode = 503;
          response.end('{"error": "loading"}');
          return;
        }
        if (request.url === '/v1/models') {
          response.end(JSON.stringify({ data: models.map((id) => ({ id })) }));
          return;
        }
        const input = body?.input ?? [];
        // Answered out of order: the client puts each back by its index.
        const data = input.map((entry, index) => ({ index, embedding: vectorOf(entry) })).reverse();
        response.end(JSON.stringify({ data, model: body?.model }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    directory.remove();
  });

  it('asks the endpoint’s only model, in batches, and caches each vector by its text’s hash', async () => {
    const texts = ['alpha', 'beta', 'gamma', 'alpha', 'delta'];
    const embedder = endpointEmbedder({
      baseUrl,
      runDirectory: directory.path,
      batchSize: 2,
      apiKey: 'sk-test',
    });
    const first = await embedder.embed(texts);
    expect(first.vectors).toEqual(texts.map(vectorOf));
    expect(first.method).toEqual({
      kind: 'endpoint',
      name: `embedder at ${baseUrl} (3 dimensions)`,
      model: 'embedder',
      endpoint: baseUrl,
      dimensions: 3,
    });
    const posts = seen.filter((entry) => entry.path === '/v1/embeddings');
    expect(posts.map((entry) => entry.body?.input?.length)).toEqual([2, 2]);
    expect(posts.every((entry) => entry.body?.model === 'embedder')).toBe(true);
    expect(seen.every((entry) => entry.authorization === 'Bearer sk-test')).toBe(true);

    const cacheFolder = join(directory.path, 'analysis', 'embeddings');
    const [cacheFile] = readdirSync(cacheFolder);
    const lines = readFileSync(join(cacheFolder, cacheFile!), 'utf8').trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { hash: string }).hash).sort()).toEqual(
      ['alpha', 'beta', 'gamma', 'delta'].map(textHash).sort(),
    );

    // Run again: nothing is sent but the model list; a new text alone is asked for.
    seen.length = 0;
    const again = await embedder.embed([...texts, 'epsilon']);
    expect(again.vectors).toEqual([...texts, 'epsilon'].map(vectorOf));
    expect(seen.filter((entry) => entry.path === '/v1/embeddings').map((entry) => entry.body?.input)).toEqual(
      [['epsilon']],
    );
  });

  it('skips a cache line cut off by a kill and appends on a line of its own', async () => {
    const cacheFolder = join(directory.path, 'analysis', 'embeddings');
    const [cacheFile] = readdirSync(cacheFolder);
    appendFileSync(join(cacheFolder, cacheFile!), '{"hash": "cut off');
    seen.length = 0;
    const embedder = endpointEmbedder({ baseUrl, model: 'embedder', runDirectory: directory.path });
    const result = await embedder.embed(['alpha', 'zeta']);
    expect(result.vectors).toEqual(['alpha', 'zeta'].map(vectorOf));
    expect(seen.map((entry) => entry.body?.input)).toEqual([['zeta']]);
    const again = await endpointEmbedder({ baseUrl, model: 'embedder', runDirectory: directory.path }).embed([
      'zeta',
    ]);
    expect(again.vectors).toEqual([vectorOf('zeta')]);
    expect(seen).toHaveLength(1);
  });

  it('rides out a 503 and refuses an endpoint that serves several models without --embeddings-model', async () => {
    failNext = 1;
    seen.length = 0;
    const result = await endpointEmbedder({ baseUrl, model: 'embedder', runDirectory: directory.path }).embed(
      ['eta'],
    );
    expect(result.vectors).toEqual([vectorOf('eta')]);
    expect(seen.map((entry) => entry.path)).toEqual(['/v1/embeddings', '/v1/embeddings']);

    models = ['chat', 'embedder'];
    await expect(
      endpointEmbedder({ baseUrl, runDirectory: directory.path }).embed(['theta']),
    ).rejects.toThrow(
      'serves several models (chat, embedder): give the embedding model with --embeddings-model',
    );
    expect(() => endpointEmbedder({ baseUrl: 'localhost:8000', runDirectory: directory.path })).toThrow(
      '--embeddings',
    );
  });
});
