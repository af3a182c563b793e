import type { TaskOuterLoop } from '../../records/task-outer-loop.js';
import { html, type SafeHtml } from '../../html/html.js';
import { chart, dataTable } from '../chart.js';
import { formatCount, formatNumber } from '../format.js';
import type { RunReportData } from '../read-run.js';

/** The report's names for the selection's reasons: `below-cut` is what the issue calls excluded. */
const placeNames: Record<string, string> = {
  train: 'train',
  validation: 'validation',
  'below-cut': 'excluded (below the cut)',
  failed: 'failed',
  tampered: 'tampered',
  unranked: 'unranked',
};
const placeColours = {
  domain: Object.values(placeNames),
  range: ['#2e8b57', '#2f6fb3', '#9aa5b1', '#f0a202', '#c0392b', '#6c5ce7'],
};

export interface RankedRun {
  rank: number | null;
  episode: string;
  score: number | null;
  stderr: number | null;
  lower: number | null;
  upper: number | null;
  record: string;
  place: string;
  grade: number | null | undefined;
}

/**
 * Every run of a task's collection (the team's or the single-agent one): its Bradley–Terry strength, its place in the
 * selection, its oracle grade.
 */
export function rankedRuns(loop: TaskOuterLoop, grades: Map<string, number | null>): RankedRun[] {
  const ranking = loop.ranking;
  const decisions = new Map(
    loop.selection?.decisions.map((decision) => [decision.episodeId, decision]) ?? [],
  );
  const excluded = new Map(ranking?.excluded.map((entry) => [entry.episodeId, entry.reason]) ?? []);
  const order = [
    ...(ranking?.ranking ?? []),
    ...(ranking?.excluded.map((entry) => entry.episodeId) ?? []),
    ...(loop.collection?.episodes.map((episode) => episode.episodeId) ?? []),
  ];
  return [...new Set(order)].map((episode) => {
    const score = ranking?.fit?.scores[episode] ?? null;
    const stderr = ranking?.fit?.stderr[episode] ?? null;
    const record = ranking?.records[episode];
    const decision = decisions.get(episode);
    const reason = decision?.reason ?? excluded.get(episode) ?? 'unranked';
    return {
      rank: decision?.rank ?? (ranking ? ranking.ranking.indexOf(episode) + 1 || null : null),
      episode,
      score,
      stderr,
      lower: score !== null && stderr !== null ? score - stderr : null,
      upper: score !== null && stderr !== null ? score + stderr : null,
      record: record ? `${record.wins}–${record.ties}–${record.losses}` : '—',
      place: placeNames[reason] ?? reason,
      grade: grades.has(episode) ? grades.get(episode) : undefined,
    };
  });
}

export async function outerLoopSection(data: RunReportData): Promise<SafeHtml> {
  const parts: SafeHtml[] = [];
  for (const loop of data.outerLoops) {
    parts.push(await taskOuterLoop(loop, data.grades, 'team'));
    if (loop.singleAgent) parts.push(await taskOuterLoop(loop.singleAgent, data.grades, 'single-agent'));
  }
  return html`<section id="outer-loop">
    <h2>Outer loop: champion runs, tournament and selection, per task</h2>
    ${parts.length === 0 ? html`<p class="empty">No champion runs have been collected yet (distill/&lt;generation&gt;/&lt;task&gt;/).</p>` : parts}
  </section>`;
}

/**
 * Which runs a part shows: the team's champion runs, or the same task's single-agent runs (collected when
 * `distill.singleAgentCollection` is on), ranked and selected the same way.
 */
type Condition = 'team' | 'single-agent';

async function taskOuterLoop(
  loop: TaskOuterLoop,
  grades: Map<string, number | null>,
  condition: Condition,
): Promise<SafeHtml> {
  const singleAgent = condition === 'single-agent';
  const runs = rankedRuns(loop, grades);
  const graded = runs.some((run) => run.grade !== undefined);
  const strengths = runs.filter((run) => run.score !== null);
  const ranking = loop.ranking;
  const fit = ranking?.fit;
  const description = ranking
    ? `${formatCount(ranking.players.length)} players, ${formatCount(ranking.matches.decided)} of ${formatCount(ranking.matches.scheduled)} matches decided` +
      (ranking.matches.failed.length > 0
        ? `, ${formatCount(ranking.matches.failed.length)} failed (left out of the fit)`
        : '') +
      (fit
        ? `; Bradley–Terry ${fit.mode}, prior ${fit.prior}, ${fit.converged ? 'converged' : 'NOT converged'}; ± one standard error (${fit.stderrMethod})`
        : '')
    : 'the tournament has not finished';
  const columns = ['rank', 'episode', 'strength', '± s.e.', 'wins–ties–losses', 'selection'];
  if (graded) columns.push('oracle grade');
  const heading = singleAgent
    ? html`<h4>${loop.generation} · ${loop.task}: single-agent (no <code>agent</code> tool, no design)</h4>`
    : html`<h3>${loop.generation} · ${loop.task}</h3>`;
  return html`${heading}
    <p>
      ${description}${loop.selection && loop.selection.short > 0 ? html`; <strong>${formatCount(loop.selection.short)} short</strong> of the runs the selection asked for` : ''}.
    </p>
    ${await chart({
      title: `Bradley–Terry strengths, ${loop.generation} ${loop.task}${singleAgent ? ', single-agent' : ''}`,
      caption: `each ${singleAgent ? 'single-agent' : 'champion'} run’s Bradley–Terry log-strength with ± one standard error, coloured by its place in the selection`,
      values: strengths,
      spec: {
        width: 420,
        encoding: { y: { field: 'episode', type: 'nominal', sort: null, title: null } },
        layer: [
          {
            mark: { type: 'rule', strokeWidth: 2 },
            encoding: {
              x: { field: 'lower', type: 'quantitative', title: 'strength' },
              x2: { field: 'upper' },
              color: { field: 'place', type: 'nominal', scale: placeColours, title: 'selection' },
            },
          },
          {
            mark: { type: 'point', filled: true, size: 70 },
            encoding: {
              x: { field: 'score', type: 'quantitative' },
              color: { field: 'place', type: 'nominal', scale: placeColours, title: 'selection' },
            },
          },
        ],
      },
      table: { columns, rows: runs.map((run) => runRow(run, graded)) },
    })}${strengths.length === 0 && runs.length > 0 ? dataTable({ columns, rows: runs.map((run) => runRow(run, graded)) }) : ''}`;
}

function runRow(run: RankedRun, graded: boolean): string[] {
  const row = [
    run.rank === null ? '—' : String(run.rank),
    run.episode,
    formatNumber(run.score),
    run.stderr === null ? '—' : `±${formatNumber(run.stderr)}`,
    run.record,
    run.place,
  ];
  if (graded) {
    row.push(
      run.grade === undefined
        ? 'not graded'
        : run.grade === null
          ? 'grader failed'
          : formatNumber(run.grade, 1),
    );
  }
  return row;
}
