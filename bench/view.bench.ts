import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { EpisodeRecord } from '../src/records/episode-record.js';
import { buildThreads } from '../src/records/threads.js';
import { startViewer } from '../src/view/index.js';
import { episodeRecord, proxyLog } from '../test/view/synthetic-viewer-run.js';

/**
 * `mass view` on a synthesised run of 2,000 episodes (20 tasks × 100, each with its record, proxy log, threads and
 * a small workspace): how long the first page and an episode page take to be served over HTTP, cold (first request)
 * and warm (median of 5), against what an eager viewer would pay before its first page: reading and validating every
 * episode's record and threads.
 */
const TASKS = 20;
const EPISODES_PER_TASK = 100;

async function synthesise(root: string): Promise<number> {
  const rows = proxyLog();
  const requests = rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
  const threads =
    buildThreads(rows)
      .map((thread) => JSON.stringify(thread))
      .join('\n') + '\n';
  let bytes = 0;
  await writeFile(join(root, 'config.yaml'), 'name: bench\n');
  for (let task = 0; task < TASKS; task++) {
    for (let index = 0; index < EPISODES_PER_TASK; index++) {
      const id = `L0-distill-task-${String(task).padStart(2, '0')}-${index}`;
      const directory = join(root, 'episodes', id);
      await mkdir(join(directory, 'workspace'), { recursive: true });
      const record = EpisodeRecord.serialize(episodeRecord(id, 'hash'));
      const report = `# Report ${id}\n\nThe EC50 is 5.9 µM.\n`;
      await writeFile(join(directory, 'episode.json'), record);
      await writeFile(join(directory, 'requests.jsonl'), requests);
      await writeFile(join(directory, 'threads.jsonl'), threads);
      await writeFile(join(directory, 'workspace', 'report.md'), report);
      bytes += record.length + requests.length + threads.length + report.length;
    }
  }
  return bytes;
}

async function timed(action: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function benchView(): Promise<Record<string, unknown>> {
  const root = await mkdtemp(join(tmpdir(), 'mass-bench-view-'));
  try {
    const bytes = await synthesise(root);
    const viewer = await startViewer({ directory: root, port: 0 });
    const pages: Record<string, string> = {
      first: '',
      allEpisodes: 'episodes/',
      episode: 'episodes/L0-distill-task-07-42/',
    };
    const figures: Record<string, { coldMs: number; warmMedianMs: number; bytes: number }> = {};
    try {
      for (const [name, path] of Object.entries(pages)) {
        let size = 0;
        const get = async () => {
          const response = await fetch(viewer.url + path);
          if (response.status !== 200) throw new Error(`${path}: status ${response.status}`);
          size = (await response.text()).length;
        };
        const coldMs = await timed(get);
        const warm: number[] = [];
        for (let repeat = 0; repeat < 5; repeat++) warm.push(await timed(get));
        figures[name] = { coldMs: Math.round(coldMs), warmMedianMs: Math.round(median(warm)), bytes: size };
      }
    } finally {
      await viewer.close();
    }
    const eagerMs = await timed(async () => {
      for (const id of await readdir(join(root, 'episodes'))) {
        const directory = join(root, 'episodes', id);
        await EpisodeRecord.read(join(directory, 'episode.json'));
        for (const line of (await readFile(join(directory, 'threads.jsonl'), 'utf8')).split('\n')) {
          if (line) JSON.parse(line);
        }
      }
    });
    return {
      run: { episodes: TASKS * EPISODES_PER_TASK, megabytes: Math.round(bytes / 1e5) / 10 },
      pages: figures,
      eagerReadOfEveryEpisodeMs: Math.round(eagerMs),
      firstPageShareOfEagerRead: Math.round((figures.first!.coldMs / eagerMs) * 1000) / 1000,
      underOneSecond: Object.values(figures).every((figure) => figure.coldMs < 1000),
      loadAverage: loadavg()[0],
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
