import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ProxyLogDecoder } from '../../src/proxy/log-decoder.js';
import { StoredProxyLogRow, type ProxyLogRow } from '../../src/proxy/log-row.js';
import {
  startRecordingProxy,
  type RecordingProxy,
  type RecordingProxyOptions,
} from '../../src/proxy/recording-proxy.js';
import {
  startScriptedServer,
  type ScriptedServer,
  type ScriptedServerOptions,
} from '../../src/testing/scripted-server.js';

export function temporaryDirectory(prefix = 'mass-test-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Every row of a proxy log, validated against the row schema, each with its whole request (as `readProxyLog`). */
export function readProxyLog(path: string): ProxyLogRow[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const decoder = new ProxyLogDecoder(path);
  return text
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => line !== '')
    .map(({ line, number }) => decoder.decode(StoredProxyLogRow.parse(JSON.parse(line)), number));
}

export interface ProxyFixture {
  server: ScriptedServer;
  proxy: RecordingProxy;
  logFile: string;
  rows: () => ProxyLogRow[];
  /** Resolves once the log holds `count` rows (rows are written when requests end). */
  waitForRows: (count: number, timeoutMs?: number) => Promise<ProxyLogRow[]>;
  close: () => Promise<void>;
}

export async function scriptedServerBehindProxy(
  options: ScriptedServerOptions = {},
  proxyOptions: Omit<RecordingProxyOptions, 'upstream' | 'listen' | 'logFile'> = {},
): Promise<ProxyFixture> {
  const directory = temporaryDirectory();
  const server = await startScriptedServer(options);
  const logFile = join(directory.path, 'requests.jsonl');
  const proxy = await startRecordingProxy({
    upstream: server.url,
    listen: { host: '127.0.0.1', port: 0 },
    logFile,
    ...proxyOptions,
  });
  const rows = () => readProxyLog(logFile);
  return {
    server,
    proxy,
    logFile,
    rows,
    waitForRows: async (count, timeoutMs = 5_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = rows();
        if (current.length >= count) return current;
        if (Date.now() > deadline) throw new Error(`proxy log has ${current.length} rows, expected ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: async () => {
      await proxy.close();
      await server.close();
      directory.remove();
    },
  };
}

/** POST a chat-completions request with fetch; returns the raw response. */
export function postCompletion(
  baseUrl: string,
  body: Record<string, unknown>,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify({
      model: 'scripted-model',
      messages: [{ role: 'user', content: 'hello' }],
      ...body,
    }),
    signal: init.signal,
  });
}

/** The `data:` payloads of an SSE body, `[DONE]` included. */
export function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((block) => block.trim())
    .filter((block) => block.startsWith('data:'))
    .map((block) => block.slice(5).trim());
}

/** A local port with no listener (taken from the OS, then released): connecting to it is refused. */
export async function unusedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
