import { join } from 'node:path';

import { SINGLE_AGENT_FOLDER } from '../../store/run-paths.js';
import { CollectionRecord, type CollectionRecord as Collection } from '../../records/generation-records.js';
import { html } from '../../html/html.js';
import { RunFiles } from '../../store/run-files.js';
import { distillTaskPath, outerLoopFiles } from '../../store/run-paths.js';
import { link, page, table } from '../layout.js';
import { readSearch, taskNames } from '../run-index.js';
import { encodePath } from '../view-paths.js';
import { generationCrumbs } from './crumbs.js';

/**
 * One generation: for each task, how its search ended and how many champion runs its outer loop collected (and how
 * many single-agent runs, where its round collected them).
 */
export async function generationPage(root: string, generation: string): Promise<string> {
  const files = new RunFiles(root);
  const tasks = [];
  for (const task of await taskNames(files, generation)) {
    tasks.push({
      task,
      search: await readSearch(files, generation, task),
      team: await readCollection(files, distillTaskPath(generation, task)),
      singleAgent: await readCollection(files, distillTaskPath(generation, task, SINGLE_AGENT_FOLDER)),
    });
  }
  const anySingleAgent = tasks.some((entry) => entry.singleAgent !== undefined);
  const rows = tasks.map(({ task, search, team, singleAgent }) => [
    link(`/generations/${encodePath([generation, task])}/`, task),
    search ? search.champion : html`<span class="muted">not finished</span>`,
    search ? (search.beatsReference ? 'yes' : 'no') : '',
    search ? search.iterations.length : '',
    successes(team),
    ...(anySingleAgent ? [successes(singleAgent)] : []),
    link(`/search/${encodePath([generation, task])}/`, 'design versions'),
  ]);
  const headings = [
    'task',
    'champion',
    'beats the reference',
    'versions',
    'champion runs (successful)',
    ...(anySingleAgent ? ['single-agent (no agent tool, no design) runs (successful)'] : []),
    'search',
  ];
  const body = html`<section>
    <h2>Tasks</h2>
    ${table(headings, rows, 'this generation has no task yet')}
  </section>`;
  return page({
    title: `Generation ${generation}`,
    crumbs: generationCrumbs(generation),
    body,
    notes: files.notes,
  });
}

/** `collection.json` under a task's folder (or its single-agent folder); none before its runs are collected. */
function readCollection(files: RunFiles, folder: string): Promise<Collection | undefined> {
  return files.record(CollectionRecord, join(folder, outerLoopFiles.collection));
}

function successes(collection: Collection | undefined): string {
  return collection ? `${collection.successes} of ${collection.episodes.length}` : '';
}
