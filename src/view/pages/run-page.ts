import { BENCHMARKS_FOLDER } from '../../records/benchmark-records.js';
import { errorMessage } from '../../errors.js';
import { html } from '../../html/html.js';
import { RunFiles } from '../../store/run-files.js';
import { evaluationPath, runFiles } from '../../store/run-paths.js';
import type { ModelGeneration } from '../../records/model-generation.js';
import { ModelRegistry } from '../../records/registry.js';
import { link, page, table } from '../layout.js';
import { LIVE_SCRIPT_ELEMENT } from '../live-script.js';
import { liveStatusMarkup, runStatusNow } from '../live-status.js';
import { folderNames, generationNames, taskNames } from '../run-index.js';
import { encodePath } from '../view-paths.js';
import { runCrumbs } from './crumbs.js';

/** The run's first page: its generations and their tasks, the evaluations, and how many episodes it holds. */
export async function runPage(root: string): Promise<string> {
  const files = new RunFiles(root);
  const config = await files.text(runFiles.config, 'this is not a run directory, or the run never started');
  const registered = await readGenerations(files);
  const generations = await generationNames(files);
  const byName = new Map(registered.map((generation) => [generation.name, generation]));
  const names = [...new Set([...registered.map((generation) => generation.name), ...generations])];
  const rows = [];
  for (const name of names) {
    const tasks = generations.includes(name) ? await taskNames(files, name) : [];
    const generation = byName.get(name);
    rows.push([
      link(`/generations/${encodePath([name])}/`, name),
      generation?.parent ?? '',
      generation?.servedAs ?? '',
      tasks.length > 0
        ? tasks.map((task) => html`${link(`/generations/${encodePath([name, task])}/`, task)} `)
        : html`<span class="muted">no search or outer loop</span>`,
    ]);
  }
  const episodes = await folderNames(root, runFiles.episodes);
  const evaluations = await folderNames(root, runFiles.evaluation);
  const evaluationRows = [];
  for (const name of evaluations) {
    evaluationRows.push([
      link(`/evaluation/${encodePath([name])}/`, name),
      (await folderNames(root, evaluationPath(name, 'episodes'))).length,
    ]);
  }
  const benchmarkRows = (await folderNames(root, BENCHMARKS_FOLDER)).map((name) => [
    link(`/${BENCHMARKS_FOLDER}/${encodePath([name])}/`, name),
  ]);
  const status = await runStatusNow(root);
  const body = html` <section id="live-status" data-state="${status?.run.state ?? 'waiting'}">
      ${liveStatusMarkup(status)}
    </section>
    <section id="generations">
      <h2>Generations</h2>
      ${table(['generation', 'parent', 'served as', 'tasks'], rows, 'no generation has started')}
    </section>
    <section id="episodes">
      <h2>Episodes</h2>
      <p>${link('/episodes/', `${episodes.length} episodes`)} in episodes/.</p>
    </section>
    <section id="evaluations">
      <h2>Evaluations</h2>
      ${table(['evaluation', 'episodes'], evaluationRows, 'no evaluation in this run')}
    </section>
    <section id="benchmarks">
      <h2>Benchmarks</h2>
      ${table(['benchmark'], benchmarkRows, 'no benchmark in this run (mass benchmark)')}
    </section>
    <section id="configuration">
      <h2>Configuration</h2>
      ${
        config === undefined
          ? html`<p class="empty">no ${runFiles.config}</p>`
          : html`<details>
              <summary>${runFiles.config}</summary>
              <pre>${config}</pre>
            </details>`
      }
    </section>`;
  return page({
    title: `Run ${root.split('/').at(-1) ?? root}`,
    crumbs: runCrumbs(),
    body,
    notes: files.notes,
    // A finished run does not change: its page runs no script at all.
    ...(status?.run.state === 'finished' ? {} : { script: LIVE_SCRIPT_ELEMENT }),
  });
}

async function readGenerations(files: RunFiles): Promise<ModelGeneration[]> {
  try {
    return (await ModelRegistry.open(files.directory)).list();
  } catch (error) {
    files.notes.push(`${runFiles.registry} was left out: ${errorMessage(error)}`);
    return [];
  }
}
