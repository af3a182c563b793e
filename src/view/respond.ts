import { stat } from 'node:fs/promises';
import { join } from 'node:path';

import { errorMessage } from '../errors.js';
import { html } from '../html/html.js';
import { episodeLocation, episodeLocationOfDir } from './episode-location.js';
import { page } from './layout.js';
import { BENCHMARKS_FOLDER } from '../records/benchmark-records.js';
import { benchmarkPage } from './pages/benchmark-page.js';
import { comparePage } from './pages/compare-page.js';
import { runCrumbs } from './pages/crumbs.js';
import { episodeListPage } from './pages/episode-list-page.js';
import { episodePage } from './pages/episode-page.js';
import { filePage, rawFile } from './pages/file-page.js';
import { generationPage } from './pages/generation-page.js';
import { notFoundPage } from './pages/not-found.js';
import { runPage } from './pages/run-page.js';
import { searchPage } from './pages/search-page.js';
import { taskPage } from './pages/task-page.js';
import { renderStatusJson } from '../status/render-json.js';
import { LIVE_JSON_ROUTE, LIVE_PAGE_POLICY, LIVE_SECTION_ROUTE } from './live-script.js';
import { liveStatusMarkup, runStatusNow } from './live-status.js';
import {
  dataResponse,
  htmlResponse,
  redirectResponse,
  styleResponse,
  type ViewerResponse,
} from './response.js';
import { VIEWER_STYLE } from './style.js';
import { decodeSegments, isRunName } from './view-paths.js';

/**
 * Answers one request of the viewer for the run directory `root`. Every page reads only the files it shows; a path
 * that is not one of the routes, or whose names could leave the run, is a 404.
 */
export async function respond(root: string, method: string, target: string): Promise<ViewerResponse> {
  if (method !== 'GET' && method !== 'HEAD') return notFoundPage('The viewer only answers GET requests.');
  const url = new URL(target, 'http://viewer.invalid');
  try {
    return await route(root, url);
  } catch (error) {
    return htmlResponse(
      page({
        title: 'This page could not be shown',
        crumbs: [...runCrumbs(), ['error', '']],
        body: html`<section><p class="bad">${errorMessage(error)}</p></section>`,
      }),
      500,
    );
  }
}

async function route(root: string, url: URL): Promise<ViewerResponse> {
  const path = url.pathname;
  if (path === '/') return htmlResponse(await runPage(root), 200, LIVE_PAGE_POLICY);
  if (path === LIVE_SECTION_ROUTE) return liveSection(root);
  if (path === LIVE_JSON_ROUTE) {
    const status = await runStatusNow(root);
    return status === undefined
      ? notFoundPage('No step of this run has started: there is no status yet.')
      : dataResponse(renderStatusJson(status), 'application/json; charset=utf-8');
  }
  if (path === '/style.css') return styleResponse(VIEWER_STYLE);
  // Browsers ask for it on every page; a 404 would be a console error on each.
  if (path === '/favicon.ico') return { status: 204, headers: {}, body: '' };
  if (path === '/compare') return compare(root, url);
  const segments = decodeSegments(path.slice(1).replace(/\/$/, ''));
  const refused = notFoundPage(`There is nothing at ${path}.`);
  // Checked before redirecting: `//host` would otherwise send the browser to another site.
  if (segments === undefined) {
    if (!/\/(files|raw)\//.test(path) || !namesBytesThatAreNotUtf8(path)) return refused;
    return notFoundPage(
      `${path} names a file whose name is not UTF-8: the viewer lists such files but does not open them; ` +
        'open it from the run directory.',
    );
  }
  if (!path.endsWith('/') && !/\/(files|raw)\//.test(path)) return redirectResponse(`${path}/`);
  const [first, second, third] = segments;

  if (first === 'episodes' && segments.length === 1) return htmlResponse(await episodeListPage(root));
  if (first === 'evaluation' && segments.length === 2 && isRunName(second!))
    return htmlResponse(await episodeListPage(root, second));
  if (first === BENCHMARKS_FOLDER && segments.length === 2 && isRunName(second!))
    return htmlResponse(await benchmarkPage(root, second!));
  if (first === 'generations' && segments.length === 2 && isRunName(second!))
    return htmlResponse(await generationPage(root, second!));
  if (first === 'generations' && segments.length === 3 && isRunName(second!) && isRunName(third!)) {
    return htmlResponse(await taskPage(root, second!, third!));
  }
  if (first === 'search' && segments.length === 3 && isRunName(second!) && isRunName(third!)) {
    return htmlResponse(await searchPage(root, second!, third!));
  }

  // An episode: `<episode folder>/`, `<episode folder>/files/<path>` or `<episode folder>/raw/<path>`.
  const length = first === 'evaluation' || first === BENCHMARKS_FOLDER ? 4 : 2;
  const location = episodeLocation(segments.slice(0, length));
  if (location === undefined || !(await isDirectory(join(root, ...location.segments)))) return refused;
  const rest = segments.slice(length);
  if (rest.length === 0) return htmlResponse(await episodePage(root, location));
  const [kind, ...file] = rest;
  if (file.length === 0) return refused;
  if (kind === 'files') return filePage(root, location, file);
  if (kind === 'raw') return rawFile(root, location, file, url.searchParams.get('download') === '1');
  return refused;
}

/** A path whose `%XX` escapes are bytes that are not UTF-8 (as a workspace file's name may be). */
function namesBytesThatAreNotUtf8(path: string): boolean {
  return path.split('/').some((segment) => {
    try {
      decodeURIComponent(segment);
      return false;
    } catch {
      return /^(?:[^%]|%[0-9A-Fa-f]{2})*$/.test(segment);
    }
  });
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

async function compare(root: string, url: URL): Promise<ViewerResponse> {
  const x = episodeLocationOfDir(url.searchParams.get('x') ?? '');
  const y = episodeLocationOfDir(url.searchParams.get('y') ?? '');
  if (!x || !y) {
    return notFoundPage('A comparison names two episode folders: /compare?x=episodes/<id>&y=episodes/<id>.');
  }
  return htmlResponse(await comparePage(root, x, y));
}

/** The run page's live section, inside only, with the run's state for the script (`X-Run-State`). */
async function liveSection(root: string): Promise<ViewerResponse> {
  const status = await runStatusNow(root);
  return dataResponse(liveStatusMarkup(status).markup, 'text/html; charset=utf-8', {
    'X-Run-State': status?.run.state ?? 'waiting',
  });
}
