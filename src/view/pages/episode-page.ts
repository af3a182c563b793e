import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { EpisodeRecord } from '../../records/episode-record.js';
import { buildThreads, Thread } from '../../records/threads.js';
import { html, type SafeHtml } from '../../html/html.js';
import { egressDestinations, readEgressLog } from '../../proxy/egress-log.js';
import { ProxyLogDecoder } from '../../proxy/log-decoder.js';
import { StoredProxyLogRow, type ProxyLogRow } from '../../proxy/log-row.js';
import type { LineLimits } from '../../store/bounded-lines.js';
import { RunFiles } from '../../store/run-files.js';
import { episodePath } from '../../store/run-paths.js';
import { episodeUrl, type EpisodeLocation } from '../episode-location.js';
import { page, table } from '../layout.js';
import { renderMarkdown } from '../markdown.js';
import { encodePath } from '../view-paths.js';
import {
  imageTypeOf,
  isOpenableFile,
  listWorkspace,
  whyNotOpened,
  type WorkspaceEntry,
} from '../workspace-listing.js';
import {
  callFactOf,
  matchDelegations,
  threadLabel,
  renderThread,
  threadAnchor,
  type CallFacts,
  type ConversationContext,
} from './conversation.js';
import { episodeCrumbs } from './crumbs.js';

const number = new Intl.NumberFormat('en-US');
/** A report larger than this is linked, not rendered on the episode page. */
const INLINE_REPORT_BYTES = 256 * 1024;

/**
 * What one episode page reads of its JSONL files (see bounded-lines.ts). The proxy log is read only for each call's
 * figures, a row at a time; its rows are kept, to rebuild the conversation, only when `threads.jsonl` is missing
 * and only up to `REBUILD_BYTES`. A line is one model call (or one thread): 16 MiB is far over a real one.
 */
const LOG_LIMITS: LineLimits = { maxLineBytes: 16 * 1024 * 1024, maxBytes: 256 * 1024 * 1024 };
const THREAD_LIMITS: LineLimits = { maxLineBytes: 16 * 1024 * 1024, maxBytes: 32 * 1024 * 1024 };
const REBUILD_BYTES = 32 * 1024 * 1024;

/** One episode: outcome and integrity, the team's conversations with delegations in place, the workspace's files. */
export async function episodePage(root: string, location: EpisodeLocation): Promise<string> {
  const files = new RunFiles(root);
  const base = join(...location.segments);
  const record = await files.record(
    EpisodeRecord,
    episodePath(base, 'record'),
    'the episode did not finish, or it is still running',
  );
  const { threads, facts } = await readConversation(files, base);
  const workspace = await listWorkspace(files.path(episodePath(base, 'workspace')));
  if (!workspace.exists)
    files.notes.push(`${base}/workspace is missing: the episode has no workspace on disk`);

  const context: ConversationContext = {
    facts,
    delegations: matchDelegations(threads),
    shown: new Set(),
  };
  const orchestrators = threads.filter((thread) => thread.role === 'orchestrator' && thread.forged !== true);
  const conversation = orchestrators.map((thread) => renderThread(thread, context));
  const others = threads
    .filter((thread) => !context.shown.has(thread.threadId))
    .map(
      (thread) =>
        html`<details>
          <summary>${threadLabel(thread)} ${thread.threadId} (${thread.calls} calls)</summary>
          ${renderThread(thread, context)}
        </details>`,
    );
  const reports = await renderReports(files, base, location, workspace.entries);
  const network = await renderNetwork(files, base, record);
  const body = html` <section id="outcome">
      <h2>Outcome</h2>
      ${record ? outcome(record) : html`<p class="empty">No episode.json: the outcome is not known.</p>`}
    </section>
    <section id="threads">
      <h2>Conversation</h2>
      <p class="muted">
        ${threads.length} threads:
        ${threads.map((thread) => html`<a href="#${threadAnchor(thread.threadId)}">${thread.forged === true ? 'forged ' : ''}${thread.role} ${thread.threadId}</a> `)}
      </p>
      ${conversation.length > 0 ? conversation : html`<p class="empty">No orchestrator conversation was recorded.</p>`}
      ${
        others.length > 0
          ? html`<h3>Other threads</h3>
              ${others}`
          : ''
      }
    </section>
    ${network} ${reports}
    <section id="files">
      <h2>Workspace files</h2>
      ${workspace.truncated ? html`<p class="muted">Only the first ${workspace.entries.length} entries are listed.</p>` : ''}
      ${fileTable(location, workspace.entries)}
    </section>`;
  return page({
    title: `Episode ${location.id}`,
    crumbs: episodeCrumbs(location, record?.task.id),
    body,
    notes: files.notes,
  });
}

/** The episode's threads, and the figures of each model call, read within the limits above. */
async function readConversation(
  files: RunFiles,
  base: string,
): Promise<{ threads: Thread[]; facts: Map<number, CallFacts> }> {
  let threads: Thread[] = [];
  const threadFile = episodePath(base, 'threads');
  const add = (thread: Thread): void => void threads.push(thread);
  if (!(await files.eachJsonLine(Thread, threadFile, 'a thread', THREAD_LIMITS, add))) threads = [];
  const facts = new Map<number, CallFacts>();
  let rows: ProxyLogRow[] | undefined = threads.length === 0 ? [] : undefined;
  let keptBytes = 0;
  const log = episodePath(base, 'proxyLog');
  // Rows are rebuilt (each may open with an earlier one's messages) only when the threads must be rebuilt from them.
  let decoder = rows === undefined ? undefined : new ProxyLogDecoder(log);
  const logRead = await files.eachJsonLine(
    StoredProxyLogRow,
    log,
    'a proxy log row',
    LOG_LIMITS,
    (stored, bytes, line) => {
      facts.set(stored.seq, callFactOf(stored));
      if (rows === undefined || decoder === undefined) return;
      keptBytes += bytes;
      if (keptBytes <= REBUILD_BYTES) rows.push(decoder.decode(stored, line));
      else {
        rows = undefined;
        decoder = undefined;
        files.notes.push(
          `${threadFile} has no thread to show, and ${log} is too large to rebuild the conversation from ` +
            'here: read the log from the run directory',
        );
      }
    },
  );
  if (!logRead) return { threads, facts: new Map() };
  if (threads.length === 0 && rows !== undefined && rows.length > 0) threads = buildThreads(rows);
  return { threads, facts };
}

function outcome(record: EpisodeRecord): SafeHtml {
  const failure = record.failure
    ? html`<p class="bad">Failed: ${record.failure.kind}: ${record.failure.detail}</p>`
    : '';
  const integrity = record.integrity.tampered
    ? html`<p class="bad">Protected files were changed: ${record.integrity.tamperedPaths.join(', ')}</p>`
    : html`<p class="good">No protected file was changed (${record.integrity.assets.length} checked).</p>`;
  const usage = record.usage.total;
  return html`<p class="${record.status === 'success' ? 'good' : 'bad'}">${record.status}</p>
    ${failure}${integrity}
    ${table(
      [
        'task',
        'model',
        'seed',
        'data seed',
        'workflow',
        'teacher',
        'duration',
        'model calls',
        'failed',
        'retried',
        'delegations',
        'tokens (prompt / completion / reasoning)',
      ],
      [
        [
          record.task.id,
          record.model,
          record.seed,
          record.dataSeed,
          record.workflowHash ?? 'bare task',
          record.teacher ? 'yes' : 'no',
          `${(record.timings.durationMs / 1000).toFixed(1)} s`,
          record.modelCalls,
          record.failedModelCalls,
          record.retriedModelCalls ?? 0,
          record.delegations,
          `${number.format(usage.promptTokens)} / ${number.format(usage.completionTokens)} / ${number.format(usage.reasoningTokens)}`,
        ],
      ],
    )}
    ${table(
      ['protected file', 'before', 'after'],
      record.integrity.assets.map((asset) => [asset.path, asset.before ?? 'absent', asset.after ?? 'absent']),
      'no protected files',
    )}
    <p class="muted">
      Sandbox: ${record.sandbox.enabled ? 'on' : 'off'}, exit
      ${record.sandbox.exitCode ?? 'none'}${record.sandbox.signal ? `, signal ${record.sandbox.signal}` : ''}${record.sandbox.limitExceeded ? `, ${record.sandbox.limitExceeded} limit exceeded` : ''},
      ${record.sandbox.cpuSeconds.toFixed(1)} CPU seconds,
      ${number.format(Math.round(record.sandbox.peakMemoryBytes / 1_048_576))} MiB peak.
    </p>`;
}

/** Rows of `egress.jsonl` the page reads, and destinations its table lists. */
const EGRESS_LIMITS = { maxRows: 20_000, maxBytes: 16 * 1024 * 1024 };
const EGRESS_DESTINATIONS = 50;

/** What the agents reached beyond the model, when the task allowed network: counts, then destinations. */
async function renderNetwork(
  files: RunFiles,
  base: string,
  record: EpisodeRecord | undefined,
): Promise<SafeHtml> {
  const log = episodePath(base, 'egressLog');
  const read = await readEgressLog(files.path(log), EGRESS_LIMITS).catch(() => undefined);
  if (record?.egress === undefined && (read === undefined || read.totalRows === 0)) return html``;
  const counts = record?.egress;
  const { destinations, more } = egressDestinations(read?.rows ?? [], EGRESS_DESTINATIONS);
  return html`<section id="network">
    <h2>Network</h2>
    ${
      counts
        ? html`<p>
            The task allows ${counts.allow.join(', ')}: ${number.format(counts.requestsAllowed)} requests
            allowed, ${number.format(counts.requestsRefused)} refused; ${number.format(counts.bytesUp)} bytes
            sent, ${number.format(counts.bytesDown)} received.
          </p>`
        : ''
    }
    ${table(
      ['host', 'port', 'verdict', 'requests', 'failed', 'bytes sent', 'bytes received', 'why'],
      destinations.map((row) => [
        row.host,
        row.port ?? '',
        html`<span class="${row.verdict === 'allowed' ? 'good' : 'bad'}">${row.verdict}</span>`,
        number.format(row.requests),
        row.failed > 0 ? html`<span class="bad">${number.format(row.failed)}</span>` : '0',
        number.format(row.bytesUp),
        number.format(row.bytesDown),
        row.reason ?? '',
      ]),
      'no request reached the egress proxy',
    )}
    ${more > 0 ? html`<p class="muted">${more} more destinations are in ${log}.</p>` : ''}
    ${
      read && read.skippedLines > 0
        ? html`<p class="muted">${read.skippedLines} lines of ${log} were not rows and were left out.</p>`
        : ''
    }
  </section>`;
}

/** The research report(s) a team leaves at the workspace's top, rendered; images there shown. */
async function renderReports(
  files: RunFiles,
  base: string,
  location: EpisodeLocation,
  entries: readonly WorkspaceEntry[],
): Promise<SafeHtml> {
  const parts: SafeHtml[] = [];
  for (const entry of entries) {
    if (!isOpenableFile(entry) || entry.path.includes('/')) continue;
    if (/\.md$/i.test(entry.path) && entry.bytes <= INLINE_REPORT_BYTES) {
      const text = await readFile(files.path(episodePath(base, 'workspace', entry.path)), 'utf8').catch(
        () => undefined,
      );
      if (text === undefined) continue;
      const rendered = renderMarkdown(text, {
        imageUrl: (path) => (imageTypeOf(path) ? episodeUrl(location, 'raw', ...path.split('/')) : undefined),
      });
      parts.push(
        html`<h3>${entry.path}</h3>
          ${rendered}`,
      );
    }
  }
  const images = entries.filter((entry) => isOpenableFile(entry) && imageTypeOf(entry.path)).slice(0, 12);
  for (const image of images) {
    parts.push(
      html`<figure>
        <img
          class="workspace-image"
          loading="lazy"
          src="${episodeUrl(location, 'raw', ...image.path.split('/'))}"
          alt="${image.path}"
        />
        <figcaption>${image.path}</figcaption>
      </figure>`,
    );
  }
  return parts.length > 0
    ? html`<section id="report">
        <h2>Report</h2>
        ${parts}
      </section>`
    : html``;
}

function fileTable(location: EpisodeLocation, entries: readonly WorkspaceEntry[]): SafeHtml {
  return table(
    ['file', 'bytes', ''],
    entries.map((entry) => [
      isOpenableFile(entry)
        ? html`<a href="${`/${encodePath(location.segments)}/files/${encodePath(entry.path.split('/'))}`}"
            >${entry.path}</a
          >`
        : html`${entry.path} <span class="muted">(${whyNotOpened(entry)})</span>`,
      entry.kind === 'file' ? number.format(entry.bytes) : '',
      isOpenableFile(entry)
        ? html`<a href="${episodeUrl(location, 'raw', ...entry.path.split('/'))}">raw</a>`
        : '',
    ]),
    'the workspace is empty',
  );
}
