import { html, type SafeHtml } from '../../html/html.js';
import type { SearchIteration, TaskSearchResult } from '../../records/search-records.js';
import { chart, dataTable } from '../chart.js';
import { formatCount, formatPercent } from '../format.js';
import type { RunReportData } from '../read-run.js';
import { searchNoisePart } from './search-noise-part.js';

export type IterationVerdict = 'won' | 'lost' | 'tie' | 'failed';

/**
 * What an iteration's version did against the champion: won (it became the champion), lost (the judge preferred the
 * champion, or its episode failed: a walkover), tie, or failed (no proposal, or no valid verdict).
 */
export function iterationVerdict(iteration: SearchIteration): IterationVerdict {
  const decision = iteration.decision;
  if (!decision) return 'failed';
  if (decision.promoted) return 'won';
  const match = decision.matches.find((candidate) => candidate.purpose !== 'arbitration');
  if (!match) return 'failed';
  if (match.result === 'walkover' || match.result === 'second') return 'lost';
  if (match.result === 'tie') return 'tie';
  if (match.result === 'failed') return 'failed';
  // It beat its opponent (the reference, under the official rule) yet was not promoted: arbitration kept the champion.
  return 'lost';
}

const verdictColours = {
  domain: ['won', 'lost', 'tie', 'failed'],
  range: ['#2e8b57', '#c0392b', '#9aa5b1', '#f0a202'],
};

/**
 * Per generation: the champion history of every task, the change size per iteration, the final champion, and the
 * search's noise beside the stabiliser's bound when it was measured.
 */
export async function innerLoopSection(data: RunReportData): Promise<SafeHtml> {
  const generations = [...new Set(data.searches.map((search) => search.generation))];
  const parts: SafeHtml[] = [];
  for (const generation of generations) {
    const searches = data.searches.filter((search) => search.generation === generation);
    const noise = searchNoisePart(
      generation,
      searches,
      data.searchRepeats.filter((repeats) => repeats.generation === generation),
      data.config.value?.search.stabiliser,
    );
    parts.push(await generationSearches(generation, searches, noise));
  }
  return html`<section id="inner-loop">
    <h2>Inner loop: the workflow search, per task</h2>
    ${parts.length === 0 ? html`<p class="empty">No search has finished yet (search/&lt;generation&gt;/&lt;task&gt;/result.json).</p>` : parts}
  </section>`;
}

async function generationSearches(
  generation: string,
  searches: TaskSearchResult[],
  noise: SafeHtml,
): Promise<SafeHtml> {
  const history = searches.flatMap((search) =>
    search.iterations.map((iteration, index) => ({
      task: search.task,
      iteration: index,
      version: iteration.version,
      verdict: iterationVerdict(iteration),
      champion: search.championHistory[index]?.champion ?? '',
    })),
  );
  const changes = searches.flatMap((search) =>
    search.iterations.flatMap((iteration, index) => {
      if (!iteration.proposal?.ok) return [];
      return [
        {
          task: search.task,
          iteration: index,
          version: iteration.version,
          changed: iteration.proposal.changeFraction,
          bound: iteration.maxChangeFraction,
        },
      ];
    }),
  );
  const bounds = changes.filter((change) => change.bound !== null);
  const changeLayers: unknown[] = [
    {
      mark: { type: 'line', point: true },
      encoding: {
        y: { field: 'changed', type: 'quantitative', title: 'share of the design changed' },
        color: { field: 'task', type: 'nominal' },
      },
    },
  ];
  if (bounds.length > 0) {
    changeLayers.push({
      transform: [{ filter: 'datum.bound !== null' }],
      mark: {
        type: 'line',
        color: '#1d2430',
        strokeDash: [5, 4],
        point: { color: '#1d2430', shape: 'stroke' },
      },
      encoding: { y: { field: 'bound', type: 'quantitative' }, detail: { field: 'task', type: 'nominal' } },
    });
  }
  return html`<h3>Generation ${generation}</h3>
    ${dataTable({
      columns: [
        'task',
        'final champion',
        'against v0',
        'beats the bare-task reference',
        'episodes (failed)',
        'judgments (failed)',
        'failed proposals',
      ],
      rows: searches.map((search) => [
        search.task,
        search.champion,
        championAgainstV0(search),
        search.beatsReference ? 'yes' : 'no: no training data from this task',
        `${formatCount(search.counts.episodes)} (${formatCount(search.counts.failedEpisodes)})`,
        `${formatCount(search.counts.judgments)} (${formatCount(search.counts.failedJudgments)})`,
        formatCount(search.counts.failedProposals),
      ]),
    })}
    ${await chart({
      title: `Champion history, ${generation}`,
      caption:
        'each iteration’s version against the champion: won (became champion), lost, tie, failed; the label is the champion after it',
      values: history,
      spec: {
        width: { step: 80 },
        height: { step: 30 },
        layer: [
          { mark: 'rect', encoding: { color: { field: 'verdict', type: 'nominal', scale: verdictColours } } },
          {
            mark: { type: 'text', color: '#fff', fontWeight: 'bold' },
            encoding: { text: { field: 'champion' } },
          },
        ],
        encoding: {
          x: { field: 'iteration', type: 'ordinal', title: 'iteration (0: v0, the task’s own design)' },
          y: { field: 'task', type: 'nominal', title: null },
        },
      },
      table: {
        columns: ['task', 'iteration', 'version', 'verdict', 'champion after'],
        rows: history.map((row) => [row.task, String(row.iteration), row.version, row.verdict, row.champion]),
      },
    })}
    ${await chart({
      title: `Change size per iteration, ${generation}`,
      caption:
        bounds.length > 0
          ? 'the share of the design each proposal changed; the dashed dark line is the stabiliser’s bound'
          : 'the share of the design each proposal changed (no stabiliser bound was set)',
      values: changes,
      spec: {
        width: 480,
        height: 200,
        layer: changeLayers,
        encoding: { x: { field: 'iteration', type: 'ordinal' } },
      },
      table: {
        columns: ['task', 'iteration', 'version', 'share changed', 'bound'],
        rows: changes.map((row) => [
          row.task,
          String(row.iteration),
          row.version,
          formatPercent(row.changed),
          row.bound === null ? '—' : formatPercent(row.bound),
        ]),
      },
    })}
    ${noise} ${searches.map(iterationTable)}`;
}

function championAgainstV0(search: TaskSearchResult): string {
  if (search.champion === 'reference') return 'the bare-task reference was never beaten';
  if (search.champion === 'v0') return 'v0 kept: no later version beat it';
  const promotions = search.iterations
    .filter((iteration) => iteration.decision?.promoted)
    .map((iteration) => iteration.version);
  return `${search.champion} replaced v0 (promoted: ${promotions.join(', ')})`;
}

function iterationTable(search: TaskSearchResult): SafeHtml {
  const rows = search.iterations.map((iteration) => {
    const matches = iteration.decision?.matches ?? [];
    const proposal = iteration.proposal;
    return [
      iteration.version,
      iterationVerdict(iteration),
      proposal === null
        ? '—'
        : proposal.ok
          ? `from ${proposal.basedOn}, ${formatPercent(proposal.changeFraction)} changed`
          : `failed: ${proposal.reason}`,
      iteration.episode
        ? `${iteration.episode.status}${iteration.episode.reason ? `: ${iteration.episode.reason}` : ''}`
        : '—',
      html`${matches.map((match) => html`<div>${match.first} vs ${match.second} (${match.purpose}): ${match.result}</div>`)}`,
      html`<span class="text"
        >${matches
          .map((match) => match.rationale ?? '')
          .filter(Boolean)
          .join('\n\n')}</span
      >`,
    ];
  });
  return html`<details>
    <summary>${search.task}: every iteration, with the judge’s reasons</summary>
    ${dataTable({ columns: ['version', 'verdict', 'proposal', 'episode', 'matches', 'rationale'], rows })}
  </details>`;
}
