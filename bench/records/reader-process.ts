// One reader of a run, alone in this process, so that its peak memory is its own: prints its figures as JSON.
// Usage: node --import tsx bench/records/reader-process.ts <reader> <arguments as JSON>
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { writeTrainingData } from '../../src/distill/index.js';
import { episodeFacts } from '../../src/episode/episode-facts.js';
import { EvaluationSummaryRecord, JudgmentRow } from '../../src/records/evaluation-records.js';
import { computeEvaluationFigures } from '../../src/records/evaluation-statistics/index.js';
import { readDelegations } from '../../src/judge/process-evidence.js';
import { exportProxyLog } from '../../src/proxy/log-export.js';
import { readProxyLog } from '../../src/proxy/log-row.js';
import { writeReport } from '../../src/report/index.js';
import { readJsonLines } from '../../src/store/json-lines.js';
import { episodeFiles, evaluationPath } from '../../src/store/run-paths.js';
import { startViewer } from '../../src/view/index.js';

export interface ReaderArguments {
  run: string;
  /** A team episode's directory (a teacher run: an orchestrator and its subagents' threads of 150 calls). */
  episode: string;
  suite: string;
  train: string[];
  validation: string[];
  evaluation: string;
  /** Viewer paths, relative to its root, opened in this order. */
  pages: string[];
  out: string;
}

const [reader, json] = process.argv.slice(2);
const args = JSON.parse(json ?? '{}') as ReaderArguments;

async function timed<T>(action: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const value = await action();
  return [Math.round(performance.now() - started), value];
}

const readers: Record<string, () => Promise<Record<string, unknown>>> = {
  /** Nothing: what the process costs before any reader (Node, tsx, the modules above). */
  idle: async () => ({}),

  /** What an episode's end does: the proxy log read whole, its threads and facts built. */
  threads: async () => {
    const [ms, threads] = await timed(async () => {
      const rows = await readProxyLog(join(args.episode, episodeFiles.proxyLog));
      return episodeFacts(rows).threads.length;
    });
    return { ms, threads };
  },

  /** `mass log export`: the log with every request whole, streamed to a file. */
  export: async () => {
    const out = join(args.out, 'exported.jsonl');
    const [ms, rows] = await timed(() => exportProxyLog(join(args.episode, episodeFiles.proxyLog), out));
    return { ms, rows, bytes: (await stat(out)).size };
  },

  /** The same, on the log `export` wrote: every request whole, as earlier versions stored them. */
  threadsFromWholeBodies: async () => {
    const [ms, threads] = await timed(async () => {
      const rows = await readProxyLog(join(args.out, 'exported.jsonl'));
      return episodeFacts(rows).threads.length;
    });
    return { ms, threads };
  },

  /** The judge's process evidence of an episode: its delegations, from threads.jsonl. */
  judgeEvidence: async () => {
    const [ms, delegations] = await timed(async () => (await readDelegations(args.episode))?.length ?? 0);
    return { ms, delegations };
  },

  /** `mass data build` on the selected episodes, into the run's dataset folder (which the report then reads). */
  data: async () => {
    const outDir = join(args.run, 'distill', 'L0', 'dataset');
    await mkdir(outDir, { recursive: true });
    const [ms, stats] = await timed(() =>
      writeTrainingData({
        episodes: [
          ...args.train.map((dir) => ({ dir, split: 'train' as const })),
          ...args.validation.map((dir) => ({ dir, split: 'validation' as const })),
        ],
        outDir,
        taskDirectories: [args.suite],
        mode: 'team',
      }),
    );
    const total = stats.splits.train.total;
    return {
      ms,
      episodes: args.train.length + args.validation.length,
      windows: total.windows + stats.splits.validation.total.windows,
      windowTokens: total.tokens + stats.splits.validation.total.tokens,
      supervisedTokens: total.supervisedTokens + stats.splits.validation.total.supervisedTokens,
    };
  },

  /** `mass report`: every record of the run read, the page rendered and written. */
  report: async () => {
    const [ms, written] = await timed(() => writeReport(args.run, join(args.out, 'report.html')));
    return { ms, pageBytes: written.bytes, notes: written.notes };
  },

  /** `mass view`: each page requested over HTTP once, cold, in order. */
  view: async () => {
    const viewer = await startViewer({ directory: args.run, port: 0 });
    const pages: Record<string, { ms: number; bytes: number }> = {};
    try {
      for (const path of args.pages) {
        const [ms, body] = await timed(async () => {
          const response = await fetch(new URL(path, viewer.url));
          if (response.status !== 200) throw new Error(`${path}: status ${response.status}`);
          return response.text();
        });
        pages[path] = { ms, bytes: Buffer.byteLength(body) };
      }
    } finally {
      await viewer.close();
    }
    return { pages };
  },

  /** The evaluation's figures as `mass eval` computes them at its end: its judgments read, every figure computed. */
  evaluation: async () => {
    const [ms, judgments] = await timed(async () => {
      const summary = await EvaluationSummaryRecord.read(
        join(args.run, evaluationPath(args.evaluation, 'summary')),
      );
      const rows = await readJsonLines(
        join(args.run, evaluationPath(args.evaluation, 'judgments')),
        JudgmentRow,
        'an evaluation judgment',
      );
      computeEvaluationFigures(
        {
          judgments: rows.flatMap((row) => (row.outcome === null ? [] : [{ ...row, outcome: row.outcome }])),
          rollouts: summary.inputs.rollouts,
        },
        {
          comparisons: summary.comparisons,
          reference: 'L0',
          pooledJudges: summary.judges.map((judge) => judge.name),
        },
      );
      return rows.length;
    });
    return { ms, judgments };
  },
};

const run = readers[reader ?? ''];
if (!run) throw new Error(`unknown reader ${reader}: one of ${Object.keys(readers).join(', ')}`);
const figures = await run();
// maxRSS is in kilobytes: the most memory this process held at once, the reader's and Node's own.
const peakRssMiB = Math.round(process.resourceUsage().maxRSS / 1024);
process.stdout.write(`${JSON.stringify({ ...figures, peakRssMiB })}\n`);
