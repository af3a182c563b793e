import type { IncomingHttpHeaders } from 'node:http';

import { REDACTED } from './secret-scrubber.js';

/** Credentials a request carries, to scrub from its log row wherever they appear (an echoed error, a prompt). */
export function secretsOf(headers: IncomingHttpHeaders): string[] {
  const secrets: string[] = [];
  const authorization = headers.authorization;
  if (authorization) {
    secrets.push(authorization);
    const token = authorization.replace(/^\s*(bearer|basic|token)\s+/i, '').trim();
    if (token.length >= 4) secrets.push(token);
  }
  for (const name of ['x-api-key', 'api-key']) {
    const value = headers[name];
    if (typeof value === 'string' && value.length >= 4) secrets.push(value);
  }
  return secrets;
}

/** A log line with each secret, as sent or JSON-escaped, replaced by `[REDACTED]`. */
export function redact(text: string, secrets: string[]): string {
  let redacted = text;
  for (const secret of secrets) {
    if (redacted.includes(secret)) redacted = redacted.replaceAll(secret, REDACTED);
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret && redacted.includes(escaped)) redacted = redacted.replaceAll(escaped, REDACTED);
  }
  return redacted;
}
