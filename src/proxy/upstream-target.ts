import { UserError } from '../errors.js';

/** The model server's address as given (`--upstream`), checked: http or https, no query or fragment. */
export function parseUpstream(upstream: string): URL {
  let url: URL;
  try {
    url = new URL(upstream);
  } catch {
    throw new UserError(
      `--upstream "${upstream}" is not a URL: give the model server's address, e.g. http://127.0.0.1:8000`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UserError(`--upstream "${upstream}" must start with http:// or https://`);
  }
  if (url.search !== '' || url.hash !== '' || upstream.includes('?') || upstream.includes('#')) {
    throw new UserError(
      `--upstream "${upstream}" has a query or fragment: give the model server's bare address, e.g. http://127.0.0.1:8000`,
    );
  }
  return url;
}

/**
 * The upstream URL for a forwarded path (one of `MODEL_ROUTES`, never a raw request target); `/v1` is not doubled
 * when the upstream already ends in it.
 */
export function upstreamTarget(upstream: URL, incomingPath: string): URL {
  let prefix = upstream.pathname.replace(/\/+$/, '');
  if (
    prefix.endsWith('/v1') &&
    (incomingPath === '/v1' || incomingPath.startsWith('/v1/') || incomingPath.startsWith('/v1?'))
  ) {
    prefix = prefix.slice(0, -3);
  }
  const target = new URL(upstream.href);
  target.pathname = `${prefix}${incomingPath}`;
  target.search = '';
  target.hash = '';
  // Credentials in the upstream's address are not sent: the key goes in the Authorization header.
  target.username = '';
  target.password = '';
  return target;
}
