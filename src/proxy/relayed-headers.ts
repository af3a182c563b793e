import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** The headers between a client, the proxy and the upstream: what is passed on each way, and what is not. */

/** Client headers forwarded upstream; everything else (method overrides, rewrite headers, cookies) is dropped. */
const FORWARDED_HEADERS = ['accept', 'user-agent', 'x-request-id', 'openai-organization', 'openai-project'];
/** The client's own credentials, forwarded only when the proxy holds no key of its own. */
const CLIENT_CREDENTIALS = ['authorization', 'x-api-key', 'api-key'];
/** Headers of one connection, never relayed as they are. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'accept-encoding',
]);

/**
 * The headers sent upstream: a few harmless client headers, the key (the proxy's own in place of the client's, or
 * the client's when the proxy holds none), and what describes the body. Answers come uncompressed, so that the key
 * can be found in them.
 */
export function forwardedHeaders(
  headers: IncomingHttpHeaders,
  target: URL,
  contentLength: number,
  upstreamApiKey: string | undefined,
): OutgoingHttpHeaders {
  const forwarded: OutgoingHttpHeaders = {};
  const passed = upstreamApiKey ? FORWARDED_HEADERS : [...FORWARDED_HEADERS, ...CLIENT_CREDENTIALS];
  for (const name of passed) {
    const value = headers[name];
    if (value !== undefined) forwarded[name] = value;
  }
  if (upstreamApiKey) forwarded.authorization = `Bearer ${upstreamApiKey}`;
  if (contentLength > 0) forwarded['content-type'] = 'application/json';
  forwarded['accept-encoding'] = 'identity';
  forwarded.host = target.host;
  forwarded['content-length'] = contentLength;
  return forwarded;
}

/** The upstream's answer headers for the client; `bodyChanges`: the proxy sets the length of what it relays. */
export function relayedHeaders(headers: IncomingHttpHeaders, bodyChanges: boolean): OutgoingHttpHeaders {
  const relayed: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || (HOP_BY_HOP.has(name) && name !== 'content-length')) continue;
    if (name === 'content-length' && bodyChanges) continue;
    relayed[name] = value;
  }
  return relayed;
}
