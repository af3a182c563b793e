import { html, type SafeHtml } from '../../html/html.js';
import type { NoiseFigures, NoiseShare, TaskRepeats } from '../../records/repeat-records.js';
import type { ChampionMatch, TaskSearchResult } from '../../records/search-records.js';
import { episodeLocationOfDir, episodeUrl } from '../episode-location.js';
import { link, table } from '../layout.js';
import { compareUrl, searchLabelDir } from '../run-index.js';

/**
 * A task's search noise (`search.repeats`; docs/search.md, "Search noise: Figure 8"): the figures, then every rerun
 * (linked to its episode), every judgment of two runs of one design, and each champion change replayed on the reruns,
 * each match with a link comparing its two workspaces.
 */
export function searchNoiseSection(
  repeats: TaskRepeats,
  search: TaskSearchResult | undefined,
  generation: string,
  task: string,
): SafeHtml {
  const dirs = new Map(repeats.runs.map((run) => [run.label, run.episode.dir]));
  const dirOf = (label: string) => dirs.get(label) ?? searchLabelDir(search, generation, task, label);
  const compare = (match: ChampionMatch) =>
    match.result === 'walkover' ? '' : link(compareUrl(dirOf(match.first), dirOf(match.second)), 'compare');
  const matchCell = (matches: readonly ChampionMatch[]) =>
    matches.map(
      (match) => html`<div>${match.first} vs ${match.second}: ${match.result} ${compare(match)}</div>`,
    );
  return html`<section id="noise">
    <h2>Search noise</h2>
    <p>
      The bare reference and each new champion were run
      ${repeats.repeats === 1 ? 'once more' : `${repeats.repeats} more times`} unchanged (rerun i with seed
      ${repeats.seed} + i) and judged by the search’s judge under the ${repeats.championRule} rule, beside the
      search: nothing the search decided came from these.
    </p>
    ${figuresTable(repeats.figures)}
    <h3>Reruns</h3>
    ${table(
      ['design', 'run', 'seed', 'episode', 'status'],
      repeats.runs.map((run) => [
        run.design,
        run.index,
        run.seed,
        episodeLink(run.episode.dir, run.label),
        run.episode.status + (run.episode.reason ? `: ${run.episode.reason}` : ''),
      ]),
      'no rerun',
    )}
    <h3>Two runs of one design</h3>
    <p class="muted">The later run is the candidate; “promoted” is a champion changed by noise alone.</p>
    ${table(
      ['design', 'candidate run', 'incumbent run', 'result', 'promoted', ''],
      repeats.selfComparisons.map((comparison) => [
        comparison.design,
        comparison.match.first,
        comparison.match.second,
        comparison.match.result,
        comparison.promoted ? html`<span class="bad">yes</span>` : 'no',
        compare(comparison.match),
      ]),
      'no comparison',
    )}
    <h3>Champion changes replayed on the reruns</h3>
    ${table(
      ['version', 'champion before', 'run', 'matches', 'champion changed'],
      repeats.promotions.flatMap((promotion) => [
        [
          promotion.version,
          promotion.championBefore,
          '0 (the search’s)',
          matchCell(promotion.original),
          'yes',
        ],
        ...promotion.replays.map((replay) => [
          promotion.version,
          promotion.championBefore,
          replay.index,
          matchCell(replay.matches),
          replay.promoted ? 'yes' : html`<span class="bad">no</span>`,
        ]),
      ]),
      'no version was promoted, so no champion change to replay',
    )}
  </section>`;
}

/** The three shares with their counts and 95 % Wilson intervals. */
export function figuresTable(figures: NoiseFigures): SafeHtml {
  const row = (label: string, share: NoiseShare) => [
    label,
    `${share.count} of ${share.of}`,
    share.rate === null ? '—' : `${(share.rate * 100).toFixed(1)} %`,
    share.interval === null
      ? '—'
      : `${(share.interval.lower * 100).toFixed(1)} – ${(share.interval.upper * 100).toFixed(1)} %`,
  ];
  return html`${table(
    ['figure', 'count', 'rate', `${figures.interval.confidence * 100} % Wilson interval`],
    [
      row('verdict flips: the same two designs, another run each', figures.verdictFlips),
      row('spurious promotions: a design preferred to a rerun of itself', figures.spuriousPromotions),
      row('champion changes repeated on reruns', figures.promotionsRepeated),
    ],
  )}
  ${
    figures.failedJudgments > 0
      ? html`<p class="muted">
          ${figures.failedJudgments} judgment(s) gave no valid verdict and are left out.
        </p>`
      : ''
  }`;
}

function episodeLink(dir: string, label: string): SafeHtml | string {
  const location = episodeLocationOfDir(dir);
  return location ? link(episodeUrl(location), label) : label;
}
