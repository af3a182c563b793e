import type { ChatMessage } from '../../src/model/types.js';
import type { ProxyLogRow } from '../../src/proxy/log-row.js';

/** A proxy log row of one chat call: `messages` sent, `reply` the assistant message the model answered. */
export function chatRow(
  seq: number,
  messages: ChatMessage[],
  reply: Record<string, unknown> = { content: 'ok' },
  extra: Partial<ProxyLogRow> = {},
  usage: { prompt_tokens: number; completion_tokens: number } | null = null,
): ProxyLogRow {
  return {
    schemaVersion: 1,
    seq,
    startedAt: '',
    endedAt: '',
    durationMs: 1,
    method: 'POST',
    path: '/v1/chat/completions',
    status: 200,
    model: 'm',
    stream: true,
    request: { model: 'm', messages },
    requestIsJson: true,
    response: {
      kind: 'completion',
      completion: {
        id: null,
        model: 'm',
        message: { role: 'assistant', content: null, ...reply },
        finish_reason: 'stop',
        usage,
      },
    },
    bytes: { request: 0, response: 0 },
    clientDisconnected: false,
    usageInjected: false,
    error: null,
    ...extra,
  };
}
