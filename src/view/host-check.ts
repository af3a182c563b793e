/**
 * The `Host` header a request to the viewer may carry: a loopback name with the port it listens on. Listening on
 * 127.0.0.1 keeps other machines out, but not web pages in the user's own browser: a page on `evil.example` whose name
 * is made to resolve to 127.0.0.1 (DNS rebinding) reads the viewer as its own origin, and the browser then sends
 * `Host: evil.example`. Refusing any other host closes that door; a request without a Host header is refused too.
 */
export function isViewerHost(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  const names = ['127.0.0.1', 'localhost', '[::1]'];
  const allowed = names.map((name) => `${name}:${port}`);
  // A browser leaves out the default port.
  if (port === 80) allowed.push(...names);
  return allowed.includes(host.toLowerCase());
}
