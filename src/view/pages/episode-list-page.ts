import { join } from 'node:path';

import { html } from '../../report/html.js';
import { RunFiles } from '../../report/run-files.js';
import { EvaluationSummaryRecord } from '../../evaluate/evaluation-records.js';
import { link, page } from '../layout.js';
import { folderNames } from '../run-index.js';
import { encodePath } from '../view-paths.js';
import { runCrumbs } from './crumbs.js';

/** Every episode folder of the run (or of one evaluation), by name only: thousands list at once. */
export async function episodeListPage(root: string, evaluation?: string): Promise<string> {
  const files = new RunFiles(root);
  const relative = evaluation ? join('evaluation', evaluation, 'episodes') : 'episodes';
  const names = await folderNames(root, relative);
  const prefix = evaluation ? `/evaluation/${encodePath([evaluation])}/episodes/` : '/episodes/';
  const summary = evaluation
    ? await files.record(
        EvaluationSummaryRecord,
        join('evaluation', evaluation, 'summary.json'),
        'the evaluation has not finished',
      )
    : undefined;
  const body = html`<section>
    <h2>${names.length} episodes</h2>
    ${summary ? html`<p class="muted">The evaluation finished: its figures are in ${join('evaluation', evaluation!, 'summary.json')} and in the report (mass report).</p>` : ''}
    <ul>
      ${names.map((name) => html`<li>${link(`${prefix}${encodePath([name])}/`, name)}</li>`)}
    </ul>
  </section>`;
  const title = evaluation ? `Evaluation ${evaluation}` : 'Episodes';
  return page({ title, crumbs: [...runCrumbs(), [title, '']], body, notes: files.notes });
}
