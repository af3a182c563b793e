import { EvaluationSummaryRecord, JudgmentRow } from '../../records/evaluation-records.js';
import { html, type SafeHtml } from '../../html/html.js';
import { RunFiles } from '../../store/run-files.js';
import { evaluationPath, runFiles } from '../../store/run-paths.js';
import { link, page, table } from '../layout.js';
import { compareUrl, folderNames } from '../run-index.js';
import { encodePath } from '../view-paths.js';
import { runCrumbs } from './crumbs.js';

/** Every episode folder of the run (or of one evaluation), by name only: thousands list at once. */
export async function episodeListPage(root: string, evaluation?: string): Promise<string> {
  const files = new RunFiles(root);
  const relative = evaluation ? evaluationPath(evaluation, 'episodes') : runFiles.episodes;
  const names = await folderNames(root, relative);
  const prefix = evaluation ? `/evaluation/${encodePath([evaluation])}/episodes/` : '/episodes/';
  const summary = evaluation
    ? await files.record(
        EvaluationSummaryRecord,
        evaluationPath(evaluation, 'summary'),
        'the evaluation has not finished',
      )
    : undefined;
  const body = html`<section>
      <h2>${names.length} episodes</h2>
      ${summary ? html`<p class="muted">The evaluation finished: its figures are in ${evaluationPath(evaluation!, 'summary')} and in the report (mass report).</p>` : ''}
      <ul>
        ${names.map((name) => html`<li>${link(`${prefix}${encodePath([name])}/`, name)}</li>`)}
      </ul>
    </section>
    ${evaluation ? await judgedPairs(files, evaluation) : ''}`;
  const title = evaluation ? `Evaluation ${evaluation}` : 'Episodes';
  return page({ title, crumbs: [...runCrumbs(), [title, '']], body, notes: files.notes });
}

/** The evaluation's judged pairs of its own episodes, each with its outcomes and a link to its comparison. */
async function judgedPairs(files: RunFiles, evaluation: string): Promise<SafeHtml> {
  const rows = await files.jsonLines(
    JudgmentRow,
    evaluationPath(evaluation, 'judgments'),
    'an evaluation judgment',
  );
  const pairs = new Map<string, { candidate: string; baseline: string; task: string; outcomes: string[] }>();
  for (const row of rows) {
    if (row.sample !== 'evaluation') continue;
    const key = `${row.candidateEpisode}\n${row.baselineEpisode}`;
    const pair = pairs.get(key) ?? {
      candidate: row.candidateEpisode,
      baseline: row.baselineEpisode,
      task: row.task,
      outcomes: [],
    };
    pair.outcomes.push(row.outcome ?? 'failed');
    pairs.set(key, pair);
  }
  const base = `evaluation/${evaluation}/episodes`;
  return html`<section>
    <h2>Judged pairs</h2>
    ${table(
      ['task', 'candidate', 'baseline', 'outcomes for the candidate', ''],
      [...pairs.values()].map((pair) => [
        pair.task,
        pair.candidate,
        pair.baseline,
        pair.outcomes.join(', '),
        link(compareUrl(`${base}/${pair.candidate}`, `${base}/${pair.baseline}`), 'compare'),
      ]),
      'no judgment of this evaluation yet',
    )}
  </section>`;
}
