import type { IncomingMessage } from 'node:http';

/**
 * The most request-body bytes the proxy reads by default: a 262,144-token context with its tool list is a few MiB
 * of JSON, so 32 MiB leaves room for any real call while one hostile request cannot cost the host gigabytes.
 */
export const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;

/**
 * The most upstream-answer bytes the proxy relays and records by default: a 32,768-token streamed answer is about
 * 10 MiB of events.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export type BodyRead =
  | { kind: 'body'; bytes: Buffer }
  /** Over the bound: reading stopped there, and nothing read was kept. */
  | { kind: 'too-large'; received: number; declared: number | null }
  /** The client went away before its body ended. */
  | { kind: 'gone' };

/**
 * Reads a request body up to `maxBytes`. A `Content-Length` over the bound is refused before a byte is read; a body
 * that grows past it (chunked, or lying about its length) stops being read at the bound. Either way no more than
 * the bound is ever held.
 */
export function readBoundedBody(request: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  const declaredText = request.headers['content-length'];
  const declared = declaredText === undefined ? null : Number(declaredText);
  if (declared !== null && Number.isFinite(declared) && declared > maxBytes) {
    return Promise.resolve({ kind: 'too-large', received: 0, declared });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (read: BodyRead) => {
      if (settled) return;
      settled = true;
      request.off('data', onData);
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) {
        chunks.length = 0;
        request.pause();
        settle({ kind: 'too-large', received, declared });
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.on('end', () => settle({ kind: 'body', bytes: Buffer.concat(chunks) }));
    request.on('error', () => settle({ kind: 'gone' }));
    request.on('close', () => {
      if (!request.complete) settle({ kind: 'gone' });
    });
  });
}
