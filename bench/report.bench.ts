import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { readRunForReport, renderReport } from '../src/report/index.js';

/**
 * `mass report` on a demo run: the time to read the run directory (every record through its schema) and to render
 * the page (Vega-Lite compiled and drawn to SVG for every chart), against the bound of 5 s, and per megabyte
 * and per episode of the run. `MASS_BENCH_REPORT_RUN=<dir>` measures an existing run; otherwise `mass demo` makes one
 * first (minutes), which is why this bench is not in the default set.
 */

const TARGET_MS = 5000;
const REPEATS = 3;
const CLI = fileURLToPath(new URL('../test/support/mass-cli.ts', import.meta.url));

function sizeOf(directory: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    bytes += statSync(join(entry.parentPath, entry.name)).size;
    files++;
  }
  return { bytes, files };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function benchReport(): Promise<Record<string, unknown>> {
  const given = process.env.MASS_BENCH_REPORT_RUN;
  const scratch = given ? undefined : mkdtempSync(join(tmpdir(), 'mass-bench-report-'));
  const run = given ?? join(scratch!, 'demo');
  try {
    if (!given) {
      const demo = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'demo', '--out', run], {
        stdio: 'inherit',
      });
      if (demo.status !== 0) throw new Error(`mass demo failed (exit ${demo.status})`);
    }
    const size = sizeOf(run);
    const episodes = readdirSync(join(run, 'episodes')).length;
    const rounds: Array<{ readMs: number; renderMs: number; totalMs: number; bytes: number }> = [];
    for (let round = 0; round < REPEATS; round++) {
      const started = performance.now();
      const data = await readRunForReport(run);
      const read = performance.now();
      const page = await renderReport(data);
      const ended = performance.now();
      rounds.push({
        readMs: read - started,
        renderMs: ended - read,
        totalMs: ended - started,
        bytes: page.length,
      });
    }
    const first = rounds[0]!;
    const warm = median(rounds.slice(1).map((round) => round.totalMs));
    const megabytes = size.bytes / 1e6;
    return {
      run: given ? run : 'a fresh mass demo run',
      runMegabytes: Number(megabytes.toFixed(1)),
      runFiles: size.files,
      episodes,
      reportKilobytes: Number((first.bytes / 1e3).toFixed(0)),
      firstReadMs: Math.round(first.readMs),
      firstRenderMs: Math.round(first.renderMs),
      firstTotalMs: Math.round(first.totalMs),
      warmTotalMedianMs: Math.round(warm),
      firstTotalOverTarget: Number((first.totalMs / TARGET_MS).toFixed(3)),
      msPerRunMegabyte: Number((first.totalMs / megabytes).toFixed(1)),
      msPerEpisode: Number((first.totalMs / episodes).toFixed(1)),
    };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
