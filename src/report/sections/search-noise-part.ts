import { html, type SafeHtml } from '../../html/html.js';
import { noiseFigures, poolNoiseFigures } from '../../records/noise-figures.js';
import type { NoiseShare, TaskRepeats } from '../../records/repeat-records.js';
import type { TaskSearchResult } from '../../records/search-records.js';
import type { RunConfig } from '../../config/run-config.js';
import { dataTable } from '../chart.js';
import { formatPercent } from '../format.js';

/**
 * A generation's search noise (`search.repeats`; docs/search.md, "Search noise: Figure 8"): per task and pooled, how
 * often a verdict flips on a rerun of the same two designs, how often a design is preferred to a rerun of itself
 * (a spurious promotion) and how often a champion change repeats on reruns; then each champion change beside the
 * stabiliser's bound for its iteration, the one setting meant to keep a search from chasing noise.
 */
export function searchNoisePart(
  generation: string,
  searches: readonly TaskSearchResult[],
  repeats: readonly TaskRepeats[],
  stabiliser: Stabiliser | undefined,
): SafeHtml {
  const title = html`<h4>Search noise, ${generation}</h4>`;
  if (repeats.length === 0) {
    return html`${title}
      <p class="empty">
        Not measured: no task of this generation has reruns (search.repeats was 0, or they have not finished).
      </p>`;
  }
  const pooled = poolNoiseFigures(repeats.map((task) => task.figures));
  const rows = [
    ...repeats.map((task) => [
      task.task,
      String(task.repeats),
      shareCell(task.figures.verdictFlips),
      shareCell(task.figures.spuriousPromotions),
      shareCell(task.figures.promotionsRepeated),
      String(task.figures.failedJudgments),
    ]),
    [
      html`<strong>all tasks</strong>`,
      '',
      shareCell(pooled.verdictFlips),
      shareCell(pooled.spuriousPromotions),
      shareCell(pooled.promotionsRepeated),
      String(pooled.failedJudgments),
    ],
  ];
  return html`${title}
    <p>
      Each task’s bare reference and every new champion were run again unchanged with new seeds and judged by
      the search’s own judge under its champion rule, beside the search (nothing it decided came from them).
      Counts with their 95 % Wilson score interval; the pairs share runs, so the intervals are if anything too
      narrow.
    </p>
    ${dataTable({
      columns: [
        'task',
        'reruns per design',
        'verdict flips (same two designs, another run each)',
        'spurious promotions (a design preferred to a rerun of itself)',
        'champion changes repeated on reruns',
        'failed judgments (left out)',
      ],
      rows,
    })}
    ${stabiliserComparison(searches, repeats, stabiliser, pooled.spuriousPromotions)}`;
}

/** The search's stabiliser setting, as the frozen configuration records it. */
type Stabiliser = NonNullable<RunConfig['search']['stabiliser']>;

/**
 * The bound of each iteration (1-based) as the searches recorded it when they ran (`iterations[i].maxChangeFraction`),
 * never computed again here; null where no search recorded one.
 */
function recordedBounds(searches: readonly TaskSearchResult[], iterations: number): (number | null)[] {
  return Array.from({ length: iterations }, (_, index) => {
    const recorded = searches.map((search) => search.iterations[index + 1]?.maxChangeFraction ?? null);
    return recorded.find((bound) => bound !== null) ?? null;
  });
}

/** Each champion change with its size, its iteration's bound and whether reruns repeated it. */
function stabiliserComparison(
  searches: readonly TaskSearchResult[],
  repeats: readonly TaskRepeats[],
  stabiliser: Stabiliser | undefined,
  spurious: NoiseShare,
): SafeHtml {
  const iterations = Math.max(0, ...searches.map((search) => search.iterations.length - 1));
  const bounds = stabiliser ? recordedBounds(searches, iterations) : [];
  const setting = stabiliser
    ? html`<p>
        The stabiliser bounded iteration i to ${formatPercent(stabiliser.initialMaxChange)} ×
        ${stabiliser.decay}<sup>i−1</sup> of the design
        (${bounds.map((bound, index) => `${index + 1}: ${bound === null ? '—' : formatPercent(bound)}`).join(', ') || 'no iteration ran'}).
        It bounds how much a proposal may change, not whether its win would repeat: a change under the bound
        that reruns do not repeat is within the search’s noise. A design as good as the champion, and no
        better, took its place in ${formatPercent(spurious.rate)} of the trials: by noise alone.
      </p>`
    : html`<p>
        No stabiliser was set (search.stabiliser): every iteration could change the whole design, so there is
        no bound to set the noise against. A design as good as the champion, and no better, took its place in
        ${formatPercent(spurious.rate)} of the trials: by noise alone.
      </p>`;
  const rows = repeats.flatMap((task) => {
    const search = searches.find((candidate) => candidate.task === task.task);
    return task.promotions.map((promotion) => {
      const index =
        search?.iterations.findIndex((iteration) => iteration.version === promotion.version) ?? -1;
      const iteration = index >= 0 ? search!.iterations[index] : undefined;
      const proposal = iteration?.proposal;
      const flips = noiseFigures({ selfComparisons: [], promotions: [promotion] }).verdictFlips;
      return [
        task.task,
        promotion.version,
        index >= 0 ? String(index) : '—',
        `${promotion.championBefore} → ${promotion.version}`,
        proposal?.ok ? formatPercent(proposal.changeFraction) : '— (the task’s own design)',
        iteration?.maxChangeFraction == null ? '—' : formatPercent(iteration.maxChangeFraction),
        `${promotion.replays.filter((replay) => replay.promoted).length} of ${promotion.replays.length}`,
        `${flips.count} of ${flips.of}`,
      ];
    });
  });
  if (rows.length === 0) {
    return html`${setting}
      <p class="empty">
        No version became champion, so there is no champion change to set beside the bound.
      </p>`;
  }
  return html`${setting}
  ${dataTable({
    columns: [
      'task',
      'version',
      'iteration',
      'champion change',
      'share of the design changed',
      'stabiliser bound',
      'repeated on reruns',
      'verdict flips',
    ],
    rows,
  })}`;
}

function shareCell(share: NoiseShare): string {
  if (share.of === 0) return '— (none)';
  const interval = share.interval!;
  const percent = (value: number) => (value * 100).toFixed(1);
  return `${share.count} of ${share.of} · ${formatPercent(share.rate)} (${percent(interval.lower)}–${percent(interval.upper)} %)`;
}
