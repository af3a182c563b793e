import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { PAPER_RUN, writePaperRun, type PaperRun } from './records/paper-run.js';
import type { ReaderArguments } from './records/reader-process.js';

/**
 * A run the size of the paper's (bench/records/paper-run.ts: 12 tasks, 396 episodes, threads of 150 calls with
 * contexts growing to about 100k tokens) and what reading it costs: its proxy logs' bytes against their distinct
 * content, as stored now and as earlier versions stored them (every request whole); each episode's disk use; and
 * each reader's time and peak memory, every reader alone in a fresh process. `MASS_BENCH_RECORDS_TASKS=<n>` makes a
 * smaller run (n tasks); `MASS_BENCH_RECORDS_KEEP=<dir>` writes the run there and keeps it.
 */
const READER = fileURLToPath(new URL('./records/reader-process.ts', import.meta.url));
const MB = 1e6;

export async function benchRecords(): Promise<Record<string, unknown>> {
  const kept = process.env.MASS_BENCH_RECORDS_KEEP;
  const root = kept ?? mkdtempSync(join(tmpdir(), 'mass-bench-records-'));
  const tasks = Number(process.env.MASS_BENCH_RECORDS_TASKS ?? PAPER_RUN.tasks);
  try {
    const started = performance.now();
    const run = await writePaperRun(root, { ...PAPER_RUN, tasks });
    const writeSeconds = (performance.now() - started) / 1000;
    const out = join(root, 'reader-output');
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const teacher = run.episodes.find((episode) => episode.kind === 'teacher')!.directory;
    const arguments_: ReaderArguments = {
      run: run.run,
      episode: teacher,
      suite: run.suite,
      train: run.selected.train,
      validation: run.selected.validation,
      evaluation: run.evaluation,
      pages: viewerPages(run, teacher),
      out,
    };
    const readers: Record<string, unknown> = {};
    for (const reader of [
      'idle',
      'threads',
      'export',
      'threadsFromWholeBodies',
      'judgeEvidence',
      'evaluation',
      'data',
      'report',
      'view',
    ]) {
      console.error(`bench records: ${reader}…`);
      readers[reader] = measure(reader, arguments_);
    }
    return {
      run: {
        episodes: run.episodes.length,
        tasks,
        secondsToWrite: round(writeSeconds),
        ...logFigures(run),
      },
      diskPerEpisode: diskPerEpisode(run),
      readers,
      loadAverage: loadavg()[0],
    };
  } finally {
    if (!kept) rmSync(root, { recursive: true, force: true });
  }
}

/** The pages a reader of the run opens first, and those of one task and one team episode. */
function viewerPages(run: PaperRun, teacher: string): string[] {
  const episode = (directory: string) => directory.slice(run.run.length);
  const task = teacher.match(/paper-task-\d+/)![0];
  const evaluated = run.episodes.find(
    (item) => item.directory.includes('/evaluation/') && item.kind === 'team',
  )!;
  return [
    '/',
    '/episodes/',
    '/generations/L0/',
    `/generations/L0/${task}/`,
    `/search/L0/${task}/`,
    `${episode(teacher)}/`,
    `/evaluation/${run.evaluation}/`,
    `${episode(evaluated.directory)}/`,
  ];
}

function measure(reader: string, arguments_: ReaderArguments): unknown {
  const child = spawnSync(process.execPath, ['--import', 'tsx', READER, reader, JSON.stringify(arguments_)], {
    encoding: 'utf8',
    maxBuffer: 64 * MB,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (child.status !== 0) throw new Error(`reader ${reader} failed (exit ${child.status})`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as unknown;
}

/** The logs of the whole run, from its templates' figures (every episode's log is one of them, its task id changed). */
function logFigures(run: PaperRun) {
  const sum = (field: 'storedBytes' | 'wholeBodyBytes' | 'distinctBytes' | 'rowFactsBytes' | 'rows') =>
    run.episodes.reduce((total, episode) => total + run.templates[episode.template]!.log[field], 0);
  const distinct = sum('distinctBytes');
  return {
    modelCalls: sum('rows'),
    longestPromptTokens: Math.max(...run.templates.map((template) => template.log.longestPromptTokens)),
    logs: {
      distinctContentMB: round(distinct / MB),
      storedMB: round(sum('storedBytes') / MB),
      wholeBodiesMB: round(sum('wholeBodyBytes') / MB),
      rowFactsMB: round(sum('rowFactsBytes') / MB),
      storedOverDistinct: round(sum('storedBytes') / distinct),
      storedOverDistinctAndRowFacts: round(sum('storedBytes') / (distinct + sum('rowFactsBytes'))),
      wholeBodiesOverDistinct: round(sum('wholeBodyBytes') / distinct),
    },
  };
}

/** Each kind of episode's files on disk, in megabytes, with its log as earlier versions wrote it. */
function diskPerEpisode(run: PaperRun) {
  const kinds = [...new Set(run.templates.map((template) => template.kind))];
  return Object.fromEntries(
    kinds.map((kind) => {
      const templates = run.templates.filter((template) => template.kind === kind);
      const mean = (value: (template: (typeof templates)[number]) => number) =>
        round(templates.reduce((total, template) => total + value(template), 0) / templates.length / MB);
      const files = Object.keys(templates[0]!.bytes);
      return [
        kind,
        {
          episodes: run.episodes.filter((episode) => episode.kind === kind).length,
          modelCalls: templates[0]!.log.rows,
          totalMB: mean((template) => Object.values(template.bytes).reduce((a, b) => a + b, 0)),
          filesMB: Object.fromEntries(
            files.map((file) => [file, mean((template) => template.bytes[file] ?? 0)]),
          ),
          requestsWithWholeBodiesMB: mean((template) => template.log.wholeBodyBytes),
        },
      ];
    }),
  );
}

function round(value: number): number {
  return Number(value.toFixed(2));
}
