import { UserError } from '../errors.js';

/** An OpenAI-style base URL, checked to be an http(s) URL, without trailing slashes. */
export function validateBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UserError(
      `base URL "${baseUrl}" is not a URL: give the server's OpenAI-style address, e.g. http://127.0.0.1:8000/v1`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UserError(`base URL "${baseUrl}" must start with http:// or https://`);
  }
  return baseUrl.replace(/\/+$/, '');
}

/** api.openai.com is OpenAI's own API, whatever the provider was called. */
export function isOpenAIHost(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}
