import {
  BenchmarkSummaryRecord,
  benchmarkPath,
  type BenchmarkSummary,
} from '../../records/benchmark-records.js';
import { OFFICIAL_COLUMNS, officialCaption, officialRows } from '../../records/benchmark-official-figures.js';
import { html, type SafeHtml } from '../../html/html.js';
import { RunFiles } from '../../store/run-files.js';
import { episodeLocationOfDir, episodeUrl } from '../episode-location.js';
import { link, page, table } from '../layout.js';
import { runCrumbs } from './crumbs.js';

/**
 * One benchmark of `mass benchmark`: for each agent run on it, each label's figures, then every trial with its
 * reward, how its verification ended and why, and a link to its episode.
 */
export async function benchmarkPage(root: string, benchmark: string): Promise<string> {
  const files = new RunFiles(root);
  const summaries: BenchmarkSummary[] = [];
  for (const name of await files.files(benchmarkPath(benchmark), '.json')) {
    if (!name.startsWith('summary-')) continue;
    const summary = await files.record(BenchmarkSummaryRecord, benchmarkPath(benchmark, name));
    if (summary) summaries.push(summary);
  }
  const body =
    summaries.length === 0
      ? html`<p class="empty">
          no finished benchmark named ${benchmark} (a summary is written when every trial is verified)
        </p>`
      : html`${summaries.map(summaryPart)}`;
  return page({
    title: `Benchmark ${benchmark}`,
    crumbs: [...runCrumbs(), [`benchmark ${benchmark}`, '']],
    body,
    notes: files.notes,
  });
}

function summaryPart(summary: BenchmarkSummary): SafeHtml {
  const toy = summary.standIn === null ? '' : ` (${summary.standIn} output: says nothing about a real model)`;
  const number = (value: number | null | undefined, digits: number) =>
    value === null || value === undefined ? '—' : value.toFixed(digits);
  return html`<section>
    <h2>Agent ${summary.agent}${toy}</h2>
    ${table(
      [
        'label',
        'trials',
        'mean reward',
        'unscored',
        'output tokens / trial',
        'reward / 1k tokens',
        `ratio to ${summary.reference ?? '—'}`,
        'delegation rate',
      ],
      summary.figures.map((figure) => [
        figure.label,
        figure.trials,
        number(figure.meanReward, 3),
        figure.unscored,
        number(figure.meanOutputTokens, 0),
        number(figure.rewardPerThousandTokens, 3),
        number(figure.ratioToReference?.value, 2),
        figure.delegationRate === null ? '—' : `${Math.round(figure.delegationRate * 100)} %`,
      ]),
    )}
    <p>${officialCaption(summary.official)}</p>
    ${table(OFFICIAL_COLUMNS, officialRows(summary.official))}
    <h3>Trials</h3>
    ${table(
      [
        'task',
        'label',
        'trial',
        'agent run',
        'output tokens',
        'verification',
        'reward',
        'detail',
        'test.sh printed',
      ],
      summary.trials.map((trial) => {
        const location = episodeLocationOfDir(trial.dir);
        return [
          trial.task,
          location ? link(episodeUrl(location), trial.label) : trial.label,
          trial.trial,
          trial.failure ?? trial.status,
          trial.outputTokens,
          trial.verification.status,
          number(trial.verification.reward, 2),
          [
            trial.verification.detail,
            trial.lostToInfrastructure && `lost to infrastructure: ${trial.lostToInfrastructure}`,
          ]
            .filter(Boolean)
            .join('; '),
          verifierOutput(trial.verification),
        ];
      }),
    )}
    ${
      summary.skipped.length === 0
        ? ''
        : html`<h3>Skipped</h3>
            ${table(
              ['task', 'why'],
              summary.skipped.map((entry) => [entry.task, entry.reason]),
            )}`
    }
  </section>`;
}

/** The last of what test.sh printed (bounded when it was recorded), folded away. */
function verifierOutput(verification: { stdoutTail: string; stderrTail: string }): SafeHtml | string {
  const parts = [
    verification.stdoutTail === ''
      ? null
      : html`<p>stdout</p>
          <pre>${verification.stdoutTail}</pre>`,
    verification.stderrTail === ''
      ? null
      : html`<p>stderr</p>
          <pre>${verification.stderrTail}</pre>`,
  ].filter((part) => part !== null);
  return parts.length === 0
    ? ''
    : html`<details>
        <summary>output</summary>
        ${parts}
      </details>`;
}
