import { open, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';

import { html } from '../../html/html.js';
import { episodePath } from '../../store/run-paths.js';
import { episodeUrl, type EpisodeLocation } from '../episode-location.js';
import { highlightCode } from '../highlight.js';
import { page } from '../layout.js';
import { renderMarkdown } from '../markdown.js';
import { fileResponse, htmlResponse, type ViewerResponse } from '../response.js';
import { resolveInside } from '../view-paths.js';
import { imageTypeOf, looksLikeText } from '../workspace-listing.js';
import { episodeCrumbs } from './crumbs.js';
import { notFoundPage } from './not-found.js';

/**
 * The raw route reads a file whole, so what one request holds in memory is bounded here; anything larger is left to
 * be opened from disk.
 */
const MAX_SERVED_BYTES = 32 * 1024 * 1024;
/** Larger text files are shown up to this many bytes, with the rest behind the raw link. */
const SHOWN_BYTES = 512 * 1024;

/**
 * A workspace file's path under the episode's workspace, or undefined when it is not there or leaves it: the URL's
 * segments were already checked for `..` and separators; `resolveInside` also refuses links that point out.
 */
async function workspaceFile(
  root: string,
  location: EpisodeLocation,
  segments: readonly string[],
): Promise<string | undefined> {
  const resolved = await resolveInside(episodePath(join(root, ...location.segments), 'workspace'), segments);
  if (resolved === undefined) return undefined;
  const stats = await stat(resolved).catch(() => undefined);
  return stats?.isFile() ? resolved : undefined;
}

/** The file's bytes: images as their own type, everything else (HTML and SVG included) as plain text. */
export async function rawFile(
  root: string,
  location: EpisodeLocation,
  segments: readonly string[],
  download: boolean,
): Promise<ViewerResponse> {
  const path = await workspaceFile(root, location, segments);
  if (path === undefined)
    return notFoundPage(`There is no file ${segments.join('/')} in the workspace of ${location.id}.`);
  const { size } = await stat(path);
  if (size > MAX_SERVED_BYTES) {
    return notFoundPage(
      `${segments.join('/')} is ${size} bytes, more than the viewer serves: open it from the run directory.`,
    );
  }
  const body = await readFile(path);
  const image = imageTypeOf(path);
  const contentType =
    image ?? (looksLikeText(body) ? 'text/plain; charset=utf-8' : 'application/octet-stream');
  return fileResponse({
    body,
    contentType,
    fileName: basename(path),
    download: download || contentType === 'application/octet-stream',
  });
}

export async function filePage(
  root: string,
  location: EpisodeLocation,
  segments: readonly string[],
): Promise<ViewerResponse> {
  const path = await workspaceFile(root, location, segments);
  const name = segments.join('/');
  if (path === undefined) return notFoundPage(`There is no file ${name} in the workspace of ${location.id}.`);
  const raw = episodeUrl(location, 'raw', ...segments);
  const size = (await stat(path)).size;
  const handle = await open(path, 'r');
  let bytes: Buffer;
  try {
    const buffer = Buffer.alloc(Math.min(size, SHOWN_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    bytes = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  let shown;
  if (imageTypeOf(path)) shown = html`<img class="workspace-image" src="${raw}" alt="${name}" />`;
  else if (!looksLikeText(bytes))
    shown = html`<p class="muted">A binary file: <a href="${raw}?download=1">download it</a>.</p>`;
  else {
    const text = bytes.toString('utf8');
    shown = /\.md$/i.test(path)
      ? html`${renderMarkdown(text, { imageUrl: (target) => (imageTypeOf(target) ? episodeUrl(location, 'raw', ...segments.slice(0, -1), ...target.split('/')) : undefined) })}
          <details>
            <summary>source</summary>
            <pre>${text}</pre>
          </details>`
      : highlightCode(text, path);
  }
  const body = html`<section>
    <h2>${name}</h2>
    <p class="muted">
      ${size} bytes · <a href="${raw}">raw</a> · <a href="${raw}?download=1">download</a> ·
      <a href="${episodeUrl(location)}">back to the episode</a>
    </p>
    ${size > SHOWN_BYTES ? html`<p class="muted">Only the first ${SHOWN_BYTES} bytes are shown.</p>` : ''}
    ${shown}
  </section>`;
  return htmlResponse(
    page({
      title: name,
      crumbs: [...episodeCrumbs(location).slice(0, -1), [location.id, episodeUrl(location)], [name, '']],
      body,
    }),
  );
}
