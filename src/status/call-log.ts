import { join } from 'node:path';

import { episodeFiles } from '../store/run-paths.js';
import { readOptional } from './optional-file.js';

/** One model call of an episode's proxy log, as much of it as status needs. */
export interface LoggedCall {
  endedAtMs: number;
  durationMs: number;
  model: string;
  ok: boolean;
  promptTokens: number;
  completionTokens: number;
}

/** A call the proxy has begun and not yet logged (`requests-open.json`). */
export interface OpenCall {
  seq: number;
  startedAt: string;
}

export interface CallLog {
  calls: LoggedCall[];
  open: OpenCall[];
}

/**
 * An episode's model calls from its proxy log (`requests.jsonl`, rows of every schema version carry the same
 * top-level figures), and the calls in flight from `requests-open.json`. A torn last line (the proxy writing it as it
 * is read) is left for the next read.
 */
export async function readCallLog(episodeDirectory: string): Promise<CallLog> {
  const text = await readOptional(join(episodeDirectory, episodeFiles.proxyLog));
  const calls: LoggedCall[] = [];
  for (const line of (text ?? '').split('\n')) {
    if (line.trim() === '') continue;
    const row = parseObject(line);
    if (row === undefined || typeof row.endedAt !== 'string') continue;
    if (row.path !== undefined && typeof row.path === 'string' && !row.path.includes('chat/completions'))
      continue;
    const usage = completionUsage(row.response);
    calls.push({
      endedAtMs: Date.parse(row.endedAt),
      durationMs: typeof row.durationMs === 'number' ? row.durationMs : 0,
      model: typeof row.model === 'string' ? row.model : 'unknown',
      ok: row.status === 200 && row.error == null,
      promptTokens: usage.prompt,
      completionTokens: usage.completion,
    });
  }
  const openText = await readOptional(join(episodeDirectory, 'requests-open.json'));
  const openRecord = openText === undefined ? undefined : parseObject(openText);
  const open = Array.isArray(openRecord?.calls)
    ? (openRecord.calls as unknown[]).flatMap((call) => {
        const value = call as { seq?: unknown; startedAt?: unknown; path?: unknown };
        if (typeof value.seq !== 'number' || typeof value.startedAt !== 'string') return [];
        if (typeof value.path === 'string' && !value.path.includes('chat/completions')) return [];
        return [{ seq: value.seq, startedAt: value.startedAt }];
      })
    : [];
  return { calls, open };
}

function completionUsage(response: unknown): { prompt: number; completion: number } {
  const usage = (
    response as { completion?: { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } } }
  )?.completion?.usage;
  return {
    prompt: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : 0,
    completion: typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : 0,
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
