import { join } from 'node:path';

import { SINGLE_AGENT_FOLDER } from '../../store/run-paths.js';
import {
  readSingleAgentOuterLoop,
  readTaskOuterLoop,
  type TaskOuterLoop,
} from '../../records/task-outer-loop.js';
import { html, type SafeHtml } from '../../html/html.js';
import type { JudgeDirectedText } from '../../records/judge-directed-text.js';
import { Match } from '../../ranking/matches.js';
import type { TaskSearchResult } from '../../records/search-records.js';
import { RunFiles } from '../../store/run-files.js';
import { distillTaskPath, outerLoopFiles } from '../../store/run-paths.js';
import { episodeLocationOfDir, episodeUrl } from '../episode-location.js';
import { link, page, table } from '../layout.js';
import { compareUrl, readSearch, searchLabelDir } from '../run-index.js';
import { encodePath } from '../view-paths.js';
import { taskCrumbs } from './crumbs.js';

/**
 * A task in one generation: the search's versions and verdicts, then the outer loop's runs, ranks and matches, and the
 * same for its single-agent runs where its round collected them.
 */
export async function taskPage(root: string, generation: string, task: string): Promise<string> {
  const files = new RunFiles(root);
  const search = await readSearch(files, generation, task);
  const team = await outerLoopPart(
    files,
    await readTaskOuterLoop(files, generation, task),
    distillTaskPath(generation, task),
    'no champion runs were collected for this task',
  );
  const singleAgentLoop = await readSingleAgentOuterLoop(files, generation, task);
  const singleAgent = singleAgentLoop
    ? await outerLoopPart(
        files,
        singleAgentLoop,
        distillTaskPath(generation, task, SINGLE_AGENT_FOLDER),
        'no single-agent runs were collected for this task',
      )
    : undefined;
  const body = html` <section id="search">
      <h2>Search</h2>
      ${search ? searchSummary(search, generation, task) : html`<p class="empty">No finished search (search/${generation}/${task}/result.json).</p>`}
      <p>
        ${link(`/search/${encodePath([generation, task])}/`, 'Design versions, diffs and the optimizer’s reasons')}
      </p>
    </section>
    <section id="outer-loop">
      <h2>Champion runs and tournament</h2>
      ${team}
    </section>
    ${
      singleAgent
        ? html`<section id="single-agent">
            <h2>Single-agent (no <code>agent</code> tool, no design): runs and tournament</h2>
            ${singleAgent}
          </section>`
        : ''
    }`;
  return page({
    title: `Task ${task} · ${generation}`,
    crumbs: taskCrumbs(generation, task),
    body,
    notes: files.notes,
  });
}

/** One collection's runs with their strength, rank and selection, then its tournament's matches (under `base`). */
async function outerLoopPart(
  files: RunFiles,
  { collection, ranking, selection }: TaskOuterLoop,
  base: string,
  empty: string,
): Promise<SafeHtml> {
  const matches = collection
    ? await files.jsonLines(Match, join(base, outerLoopFiles.matches), 'a match')
    : [];
  const decisions = new Map(selection?.decisions.map((decision) => [decision.episodeId, decision]) ?? []);
  const runs = (collection?.episodes ?? []).map((run) => {
    const decision = decisions.get(run.episodeId);
    const score = ranking?.fit?.scores[run.episodeId];
    return [
      episodeLink(run.dir, run.episodeId),
      run.status,
      run.tampered ? html`<span class="bad">tampered</span>` : 'no',
      judgeDirectedCell(run.judgeDirected),
      score === undefined
        ? ''
        : `${score.toFixed(3)} ± ${(ranking?.fit?.stderr[run.episodeId] ?? 0).toFixed(3)}`,
      decision?.rank ?? '',
      decision?.reason ?? '',
    ];
  });
  return html`${table(
      [
        'episode',
        'status',
        'tampered',
        'text addressing the judge',
        'Bradley–Terry strength',
        'rank',
        'selection',
      ],
      runs,
      empty,
    )}
    <h3>Matches</h3>
    ${table(
      ['a', 'b', 'winner', ''],
      matches.map((match) => [
        match.a,
        match.b,
        match.winner,
        link(compareUrl(`episodes/${match.a}`, `episodes/${match.b}`), 'compare'),
      ]),
      'no decided match',
    )}`;
}

function episodeLink(dir: string, label: string): SafeHtml | string {
  const location = episodeLocationOfDir(dir);
  return location ? link(episodeUrl(location), label) : label;
}

function searchSummary(search: TaskSearchResult, generation: string, task: string): SafeHtml {
  const rows = [
    [
      episodeLink(search.reference.dir, 'reference (bare task)'),
      search.reference.status,
      search.reference.reason ?? '',
      '',
      '',
    ],
    ...search.iterations.map((iteration) => [
      iteration.episode ? episodeLink(iteration.episode.dir, iteration.version) : iteration.version,
      iteration.episode?.status ?? (iteration.proposal?.ok === false ? 'no proposal' : 'no episode'),
      iteration.episode?.reason ?? (iteration.proposal?.ok === false ? iteration.proposal.reason : ''),
      iteration.decision?.championAfter ?? '',
      iteration.decision
        ? iteration.decision.matches.map((match) => {
            const first = searchLabelDir(search, generation, task, match.first);
            const second = searchLabelDir(search, generation, task, match.second);
            return html`<div>
              ${match.first} vs ${match.second}: ${match.result} ${link(compareUrl(first, second), 'compare')}
            </div>`;
          })
        : '',
    ]),
  ];
  return html`<p>
      Champion:
      <strong>${search.champion}</strong
      >${search.beatsReference ? ' (beats the bare-task reference)' : ' (never beat the reference)'} · rule
      ${search.championRule} · judge mode ${search.judgeMode}
    </p>
    ${table(['version', 'status', 'why', 'champion after', 'matches'], rows)}`;
}

/** A run's judge-directed text: its spans, the first ones' files and lines in the cell's title; blank when not scanned. */
function judgeDirectedCell(found: JudgeDirectedText | undefined): SafeHtml | string {
  if (!found) return '';
  if (found.spans === 0) return 'none';
  const where = found.findings
    .map((finding) => `${finding.file}:${finding.line ?? '?'} ${finding.text}`)
    .join('\n');
  const count = `${found.spans} ${found.spans === 1 ? 'span' : 'spans'}, ${found.characters} characters`;
  return html`<span class="bad" title="${where}">${count}</span>`;
}
