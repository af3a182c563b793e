import { UserError } from '../errors.js';

/**
 * How a base URL is used, which decides what it must look like:
 * - `team`: the executor's server, reached by qwen-code through the recording proxy. The harness posts to
 *   `<base>/chat/completions` and the proxy forwards only `/v1/...` paths, so the address must end in `/v1`.
 * - `openai`: OpenAI's own API, whose every path is under `/v1` (the SDK appends `/chat/completions`).
 * - `openai-compatible`: a judge or optimizer on another OpenAI-style server; the SDK appends `/chat/completions` to
 *   whatever version path the server uses (`/v1`, `/openai/v1`, `/v1beta/openai`), so the path is free.
 * - `anthropic`: the SDK appends `/v1/messages` itself: the address is the server's root, without `/v1`.
 */
export type BaseUrlUse = 'team' | 'openai' | 'openai-compatible' | 'anthropic';

/** What is wrong with a base URL for its use, as a phrase to follow its name; null when it is fine. */
export function baseUrlProblem(baseUrl: string, use: BaseUrlUse): string | null {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return `${JSON.stringify(baseUrl)} is not a URL: give the server's address, e.g. ${example(use)}`;
  }
  const shown = JSON.stringify(withoutPassword(url));
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `${shown} must start with http:// or https://, e.g. ${example(use)}`;
  }
  if (url.search !== '' || url.hash !== '' || baseUrl.includes('?') || baseUrl.includes('#')) {
    return `${shown} has a query or fragment: give the bare address, e.g. ${example(use)}`;
  }
  const path = url.pathname.replace(/\/+$/, '');
  if ((use === 'team' || use === 'openai') && !path.endsWith('/v1')) {
    const why =
      use === 'team'
        ? 'the team (qwen-code) calls <base>/chat/completions through the proxy, which forwards only /v1 paths'
        : "OpenAI's API is under /v1";
    return `${shown} does not end in /v1 (${why}): give e.g. ${suggestion(url, use)}`;
  }
  if (use === 'anthropic' && path.endsWith('/v1')) {
    return `${shown} ends in /v1, which the Anthropic SDK adds itself: give the server's root, e.g. ${suggestion(url, use)}`;
  }
  return null;
}

/** The base URL given on the command line, checked for its use; a bad one is a `UserError` naming the flag. */
export function checkedBaseUrlFlag(baseUrl: string, flag: string, use: BaseUrlUse): string {
  const problem = baseUrlProblem(baseUrl, use);
  if (problem !== null) throw new UserError(`${flag} ${problem}`);
  return baseUrl;
}

/** The address as it may be shown: a password in it is masked, never echoed into a message. */
function withoutPassword(url: URL): string {
  if (url.password === '') return url.href;
  const masked = new URL(url.href);
  masked.password = '***';
  return masked.href;
}

function example(use: BaseUrlUse): string {
  if (use === 'anthropic') return 'https://api.anthropic.com';
  if (use === 'openai') return 'https://api.openai.com/v1';
  return 'http://127.0.0.1:8000/v1';
}

/** The given address made right: `/v1` added, or taken off for Anthropic. */
function suggestion(url: URL, use: BaseUrlUse): string {
  const path = url.pathname.replace(/\/+$/, '');
  const fixed = use === 'anthropic' ? path.slice(0, -3) : `${path}/v1`;
  return `${url.protocol}//${url.host}${fixed}`;
}
