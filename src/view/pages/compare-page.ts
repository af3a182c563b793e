import { readFile } from 'node:fs/promises';

import { EpisodeRecord } from '../../records/episode-record.js';
import { JudgmentRow } from '../../records/evaluation-records.js';
import { escapeHtml, html, trustedMarkup, type SafeHtml } from '../../html/html.js';
import { unifiedDiff } from '../../line-diff.js';
import { RunFiles } from '../../store/run-files.js';
import { episodePath, evaluationPath, runFiles } from '../../store/run-paths.js';
import { episodeUrl, type EpisodeLocation } from '../episode-location.js';
import { link, page, table } from '../layout.js';
import { generationNames, searchJudgments, tournamentJudgments, type StoredJudgment } from '../run-index.js';
import {
  isOpenableFile,
  listWorkspace,
  looksLikeText,
  whyNotOpened,
  type WorkspaceEntry,
} from '../workspace-listing.js';
import { runCrumbs } from './crumbs.js';

/** Files larger than this are compared by size only. */
const DIFF_BYTES = 256 * 1024;

interface Side {
  location: EpisodeLocation;
  dir: string;
  record: EpisodeRecord | undefined;
  entries: WorkspaceEntry[];
}

/** Two workspaces side by side, every verdict the run holds on that pair, and a diff of their files. */
export async function comparePage(root: string, x: EpisodeLocation, y: EpisodeLocation): Promise<string> {
  const files = new RunFiles(root);
  const sides: [Side, Side] = [await readSide(files, x), await readSide(files, y)];
  const verdicts = await verdictsOnPair(files, sides);
  const evaluationRows = await evaluationVerdicts(files, sides);
  const body = html` <section id="workspaces">
      <h2>The two workspaces</h2>
      <div class="side-by-side">${sides.map((side, index) => sideColumn(side, index === 0 ? 'x' : 'y'))}</div>
    </section>
    <section id="verdicts">
      <h2>Verdicts on this pair</h2>
      ${verdicts.length === 0 && evaluationRows.length === 0 ? html`<p class="empty">The run holds no verdict on this pair.</p>` : ''}
      ${verdicts.map((verdict) => judgmentView(verdict, sides))}
      ${evaluationRows.length > 0 ? evaluationTable(evaluationRows) : ''}
    </section>
    <section id="diff">
      <h2>Files compared</h2>
      ${await fileDiffs(files, sides)}
    </section>`;
  return page({
    title: `${x.id} vs ${y.id}`,
    crumbs: [...runCrumbs(), ['comparison', '']],
    body,
    notes: files.notes,
  });
}

async function readSide(files: RunFiles, location: EpisodeLocation): Promise<Side> {
  const dir = location.segments.join('/');
  const record = await files.record(EpisodeRecord, episodePath(dir, 'record'), 'the episode did not finish');
  const listing = await listWorkspace(files.path(episodePath(dir, 'workspace')));
  if (!listing.exists) files.notes.push(`${dir}/workspace is missing`);
  return { location, dir, record, entries: listing.entries };
}

function sideColumn(side: Side, name: string): SafeHtml {
  const record = side.record;
  return html`<div>
    <h3>${name}: ${link(episodeUrl(side.location), side.location.id)}</h3>
    ${record ? html`<p class="${record.status === 'success' ? 'good' : 'bad'}">${record.status}${record.integrity.tampered ? ' · tampered' : ''} · ${record.modelCalls} model calls · ${record.delegations} delegations</p>` : html`<p class="empty">no episode.json</p>`}
    ${table(
      ['file', 'bytes'],
      side.entries.map((entry) => [
        isOpenableFile(entry)
          ? link(episodeUrl(side.location, 'files', ...entry.path.split('/')), entry.path)
          : `${entry.path} (${whyNotOpened(entry)})`,
        entry.bytes,
      ]),
      'the workspace is empty',
    )}
  </div>`;
}

/** The search's and the tournament's judgments of this task whose two sides are these two episodes. */
async function verdictsOnPair(files: RunFiles, sides: [Side, Side]): Promise<StoredJudgment[]> {
  const task = sides[0].record?.task.id ?? sides[1].record?.task.id;
  if (task === undefined) return [];
  const pair = new Set([sides[0].dir, sides[1].dir]);
  const found: StoredJudgment[] = [];
  for (const generation of await generationNames(files)) {
    const candidates = [
      ...(await searchJudgments(files, generation, task)),
      ...(await tournamentJudgments(files, generation, task)),
    ];
    for (const judgment of candidates) {
      if (judgment.xDir !== judgment.yDir && pair.has(judgment.xDir) && pair.has(judgment.yDir))
        found.push(judgment);
    }
  }
  return found;
}

function sideName(dir: string, sides: [Side, Side]): string {
  return dir === sides[0].dir ? `x (${sides[0].location.id})` : `y (${sides[1].location.id})`;
}

function judgmentView(judgment: StoredJudgment, sides: [Side, Side]): SafeHtml {
  const record = judgment.record;
  const dirOf = { x: judgment.xDir, y: judgment.yDir };
  const winner =
    record.winner === null
      ? `failed: ${record.failure ?? ''}`
      : record.winner === 'tie'
        ? 'tie'
        : sideName(dirOf[record.winner], sides);
  return html`<h3>${judgment.file}</h3>
    <p>
      Winner: <strong>${winner}</strong> · judge ${record.model} · seed ${record.seed} · mode
      ${record.mode}${record.ordersAgree === null ? '' : record.ordersAgree ? ' · the two orders agree' : ' · the two orders disagree'}
    </p>
    ${record.judgments.map((single) => {
      const shownFirst = sideName(dirOf[single.shownAsA], sides);
      const rationale = single.verdict?.rationale ?? single.failure ?? '';
      return html`<div class="message">
        <p>
          Order: A was ${shownFirst} · verdict ${single.verdict?.winner ?? 'none'} →
          ${single.winner === null ? 'failed' : single.winner === 'tie' ? 'tie' : sideName(dirOf[single.winner], sides)}
          · ${single.attempts.length} attempt(s)
        </p>
        <div class="text">${rationale}</div>
      </div>`;
    })}`;
}

async function evaluationVerdicts(
  files: RunFiles,
  sides: [Side, Side],
): Promise<Array<{ row: JudgmentRow; candidateIsX: boolean }>> {
  const [x, y] = sides;
  if (x.location.segments[0] !== runFiles.evaluation || x.location.segments[1] !== y.location.segments[1])
    return [];
  const rows = await files.jsonLines(
    JudgmentRow,
    evaluationPath(x.location.segments[1]!, 'judgments'),
    'an evaluation judgment',
  );
  return rows
    .filter(
      (row) =>
        (row.candidateEpisode === x.location.id && row.baselineEpisode === y.location.id) ||
        (row.candidateEpisode === y.location.id && row.baselineEpisode === x.location.id),
    )
    .map((row) => ({ row, candidateIsX: row.candidateEpisode === x.location.id }));
}

function evaluationTable(rows: Array<{ row: JudgmentRow; candidateIsX: boolean }>): SafeHtml {
  return html`<h3>Evaluation judgments</h3>
    ${table(
      ['judge', 'seed', 'order', 'candidate', 'outcome for the candidate', 'rationale'],
      rows.map(({ row, candidateIsX }) => {
        const verdict = row.attempts.at(-1)?.parse;
        return [
          row.judge,
          row.seed,
          row.order,
          `${row.candidate} (${candidateIsX ? 'x' : 'y'})`,
          row.outcome ?? `failed: ${row.failure ?? ''}`,
          html`<div class="text">${verdict?.ok ? verdict.rationale : (verdict?.error ?? '')}</div>`,
        ];
      }),
    )}`;
}

async function fileDiffs(files: RunFiles, sides: [Side, Side]): Promise<SafeHtml> {
  const [x, y] = sides;
  const xFiles = new Map(x.entries.filter(isOpenableFile).map((entry) => [entry.path, entry]));
  const yFiles = new Map(y.entries.filter(isOpenableFile).map((entry) => [entry.path, entry]));
  const paths = [...new Set([...xFiles.keys(), ...yFiles.keys()])].sort();
  const rows: SafeHtml[] = [];
  for (const path of paths) {
    const left = xFiles.get(path);
    const right = yFiles.get(path);
    if (!left || !right) {
      rows.push(html`<li>${path}: only in ${left ? 'x' : 'y'}</li>`);
      continue;
    }
    if (left.bytes > DIFF_BYTES || right.bytes > DIFF_BYTES) {
      rows.push(html`<li>${path}: ${left.bytes} and ${right.bytes} bytes (too large to compare here)</li>`);
      continue;
    }
    const [before, after] = await Promise.all([
      readFile(files.path(episodePath(x.dir, 'workspace', path))),
      readFile(files.path(episodePath(y.dir, 'workspace', path))),
    ]);
    if (before.equals(after)) rows.push(html`<li>${path}: identical</li>`);
    else if (!looksLikeText(before) || !looksLikeText(after))
      rows.push(html`<li>${path}: binary files differ</li>`);
    else {
      const diff = unifiedDiff(before.toString('utf8'), after.toString('utf8'));
      rows.push(
        html`<li>
          <details open>
            <summary>${path}: differs</summary>
            ${diffMarkup(diff)}
          </details>
        </li>`,
      );
    }
  }
  return rows.length === 0
    ? html`<p class="empty">Neither workspace has files.</p>`
    : html`<ul>
        ${rows}
      </ul>`;
}

/** Built as a string: each line's newline is content of the `<pre>`, not template layout. */
function diffMarkup(diff: string): SafeHtml {
  const lines = diff.split('\n').map((line) => {
    const escaped = escapeHtml(line);
    if (line.startsWith('+')) return `<span class="diff-add">${escaped}</span>`;
    if (line.startsWith('-')) return `<span class="diff-remove">${escaped}</span>`;
    return escaped;
  });
  return trustedMarkup(`<pre>${lines.join('\n')}</pre>`);
}
