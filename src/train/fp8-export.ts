import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { z } from 'zod';

import { SystemError, UserError } from '../errors.js';
import { logTail, runLoggedProcess } from './logged-process.js';
import { defaultTrainerPython } from './trainer-python.js';

/** `python/export_fp8.py`: a merged generation block-wise to FP8, in the layout of Qwen's FP8 checkpoints. */
const EXPORT_SCRIPT = fileURLToPath(new URL('../../src/train/python/export_fp8.py', import.meta.url));
const REPORT_FILE = 'fp8_export.json';

/** `fp8_export.json`, written last by the export: its presence means the export is whole. */
export const Fp8ExportReport = z.looseObject({
  src: z.string(),
  out: z.string(),
  like: z.string().nullable(),
  block: z.number().int().positive(),
  scaleDtype: z.string(),
  quantised: z.number().int().positive(),
  kept: z.number().int().nonnegative(),
  maxErrorOverBound: z.number().nonnegative(),
  maxRelativeError: z.number().nonnegative(),
  differences: z.array(z.string()).optional(),
  probe: z.string().optional(),
});
export type Fp8ExportReport = z.infer<typeof Fp8ExportReport>;

export interface Fp8ExportOptions {
  /** The merged BF16 checkpoint. */
  src: string;
  /** The FP8 checkpoint to write. */
  out: string;
  /** An FP8 checkpoint whose layout to follow, tensor by tensor (Qwen's own). */
  like?: string;
  /** The trainer's probe.json, scored by the exported model into `<out>/probe.json` for the deployment check. */
  probe?: string;
  /** The Python with torch, transformers and safetensors; default: the trainer's. */
  python?: string;
  logFile: string;
  signal?: AbortSignal;
}

/**
 * Exports `src` to FP8 in `out`, or returns the export already there from the same `src` (a resumed run exports
 * nothing twice). A layout that differs from `like`'s, or weights read back beyond e4m3's rounding, is an error.
 */
export async function exportFp8(options: Fp8ExportOptions): Promise<Fp8ExportReport> {
  for (const [flag, dir] of [
    ['--src', options.src],
    ['--like', options.like],
  ] as const) {
    if (dir !== undefined && !existsSync(path.join(dir, 'config.json'))) {
      throw new UserError(`${flag} ${dir}: no config.json there; give a saved checkpoint's folder`);
    }
  }
  const existing = await readReport(options.out);
  if (
    existing &&
    path.resolve(existing.src) === path.resolve(options.src) &&
    (!options.probe || existing.probe)
  ) {
    return existing;
  }
  const argv = [
    options.python ?? defaultTrainerPython(),
    EXPORT_SCRIPT,
    'export',
    '--src',
    options.src,
    '--out',
    options.out,
    ...(options.like ? ['--like', options.like] : []),
    ...(options.probe ? ['--probe', options.probe] : []),
  ];
  const outcome = await runLoggedProcess({
    argv,
    label: 'the FP8 export',
    logFile: options.logFile,
    env: { ...process.env, HF_HUB_OFFLINE: '1', PYTHONDONTWRITEBYTECODE: '1' },
    signal: options.signal,
  });
  const report = await readReport(options.out);
  if (outcome.exitCode === 2 && report?.differences?.length) {
    throw new UserError(
      `the FP8 export of ${options.src} differs from ${options.like} in ${report.differences.length} tensor(s) or ` +
        `setting(s), first: ${report.differences.slice(0, 3).join('; ')} (all of them in ${path.join(options.out, REPORT_FILE)})`,
    );
  }
  if (outcome.exitCode !== 0 || !report) {
    const tail = await logTail(options.logFile);
    const refusal = tail
      .split('\n')
      .map((line) => /^\{"error": (".*")\}$/.exec(line.trim()))
      .findLast((match) => match !== null);
    const message = refusal
      ? (JSON.parse(refusal[1]!) as string)
      : `its log ${options.logFile} ends:\n${tail}`;
    const error = `the FP8 export of ${options.src} failed: ${message}`;
    throw refusal ? new UserError(error) : new SystemError(error);
  }
  if (report.maxErrorOverBound > 1) {
    throw new SystemError(
      `the FP8 export of ${options.src} reads weights back beyond e4m3's rounding (${report.maxErrorOverBound} of the bound)`,
    );
  }
  return report;
}

async function readReport(out: string): Promise<Fp8ExportReport | undefined> {
  const file = path.join(out, REPORT_FILE);
  if (!existsSync(file)) return undefined;
  const parsed = Fp8ExportReport.safeParse(JSON.parse(await readFile(file, 'utf8')));
  return parsed.success ? parsed.data : undefined;
}
