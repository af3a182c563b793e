/** What a route answers; the server only copies it onto the socket, so routes are tested without one. */
export interface ViewerResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

/**
 * No script may run on any page: the viewer uses none (folding is `<details>`) but the run page's one live script,
 * allowed there alone by its hash (live-script.ts), so even markup that slipped through the escaping could not execute. Styles and images only from the viewer itself; no frames, forms or base URL.
 */
export const PAGE_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'none'; form-action 'none'; " +
  "base-uri 'none'; frame-ancestors 'none'";

/** A workspace file is shown in a sandbox: even if a browser rendered it as a document, it would have no origin. */
export const FILE_POLICY = "default-src 'none'; style-src 'none'; script-src 'none'; sandbox";

const commonHeaders = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/** A page; `policy` is `PAGE_POLICY` but on the live run page (`LIVE_PAGE_POLICY`, live-script.ts). */
export function htmlResponse(markup: string, status = 200, policy = PAGE_POLICY): ViewerResponse {
  return {
    status,
    headers: {
      ...commonHeaders,
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': policy,
      'X-Frame-Options': 'DENY',
    },
    body: markup,
  };
}

export function styleResponse(css: string): ViewerResponse {
  return {
    status: 200,
    headers: { ...commonHeaders, 'Content-Type': 'text/css; charset=utf-8' },
    body: css,
  };
}

/** A workspace file's bytes under a content type that cannot run: images as images, everything else as text. */
export function fileResponse(options: {
  body: Buffer;
  contentType: string;
  fileName: string;
  download: boolean;
}): ViewerResponse {
  const disposition = options.download ? 'attachment' : 'inline';
  return {
    status: 200,
    headers: {
      ...commonHeaders,
      'Content-Type': options.contentType,
      'Content-Security-Policy': FILE_POLICY,
      'Content-Disposition': `${disposition}; filename*=UTF-8''${encodeURIComponent(options.fileName)}`,
    },
    body: options.body,
  };
}

export function redirectResponse(location: string): ViewerResponse {
  return { status: 302, headers: { ...commonHeaders, Location: location }, body: '' };
}

/** Text or JSON that only the viewer's own script reads; never a document of its own. */
export function dataResponse(
  body: string,
  contentType: string,
  extra: Record<string, string> = {},
): ViewerResponse {
  return {
    status: 200,
    headers: {
      ...commonHeaders,
      'Content-Type': contentType,
      'Content-Security-Policy': FILE_POLICY,
      ...extra,
    },
    body,
  };
}
