import { CollectionRecord } from '../../distill/generation/generation-records.js';
import { html } from '../../html/html.js';
import { RunFiles } from '../../store/run-files.js';
import { distillTaskPath, outerLoopFiles } from '../../store/run-paths.js';
import { link, page, table } from '../layout.js';
import { readSearch, taskNames } from '../run-index.js';
import { encodePath } from '../view-paths.js';
import { generationCrumbs } from './crumbs.js';

/** One generation: for each task, how its search ended and how many champion runs its outer loop collected. */
export async function generationPage(root: string, generation: string): Promise<string> {
  const files = new RunFiles(root);
  const rows = [];
  for (const task of await taskNames(files, generation)) {
    const search = await readSearch(files, generation, task);
    const collection = await files.record(
      CollectionRecord,
      distillTaskPath(generation, task, outerLoopFiles.collection),
    );
    rows.push([
      link(`/generations/${encodePath([generation, task])}/`, task),
      search ? search.champion : html`<span class="muted">not finished</span>`,
      search ? (search.beatsReference ? 'yes' : 'no') : '',
      search ? search.iterations.length : '',
      collection ? `${collection.successes} of ${collection.episodes.length}` : '',
      link(`/search/${encodePath([generation, task])}/`, 'design versions'),
    ]);
  }
  const body = html`<section>
    <h2>Tasks</h2>
    ${table(
      ['task', 'champion', 'beats the reference', 'versions', 'champion runs (successful)', 'search'],
      rows,
      'this generation has no task yet',
    )}
  </section>`;
  return page({
    title: `Generation ${generation}`,
    crumbs: generationCrumbs(generation),
    body,
    notes: files.notes,
  });
}
