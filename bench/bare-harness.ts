// qwen-code started directly, without sandbox or proxy: the floor an episode's harness run is measured against.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { DEFAULT_SAMPLING, qwenSettings, type HarnessProfile } from '../src/harness/qwen-settings.js';

const require = createRequire(import.meta.url);
const cli = require.resolve('@qwen-code/qwen-code/cli-entry.js');

export interface BareHarnessRun {
  /** The Node executable. */
  node: string;
  baseUrl: string;
  prompt: string;
  /** A fresh folder: the run's home and working directory are made in it. */
  directory: string;
  profile: HarnessProfile;
  compileCacheDirectory?: string | null;
}

/** Runs the harness to its end; resolves with its wall milliseconds, rejects when it fails. */
export async function runBareHarness(run: BareHarnessRun): Promise<number> {
  const home = join(run.directory, 'home');
  const workspace = join(run.directory, 'workspace');
  // A /tmp of its own, as in the sandbox: qwen-code keeps per-session files there.
  const temporary = join(run.directory, 'tmp');
  for (const folder of [home, workspace, temporary]) mkdirSync(folder, { recursive: true });
  const settings = qwenSettings({
    model: 'm',
    baseUrl: `${run.baseUrl}/v1`,
    apiKeyEnv: 'MASS_BENCH_KEY',
    sampling: { ...DEFAULT_SAMPLING, seed: 1 },
    requestTimeoutMs: 600_000,
    contextWindowSize: 262_144,
    shellTimeoutMs: 600_000,
    profile: run.profile,
  });
  writeFileSync(join(home, 'settings.json'), JSON.stringify(settings));
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      run.node,
      [cli, '--model', 'm', '--approval-mode', 'yolo', '--output-format', 'stream-json'],
      {
        cwd: workspace,
        stdio: ['pipe', 'ignore', 'ignore'],
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: home,
          TMPDIR: temporary,
          LANG: 'C.UTF-8',
          QWEN_HOME: home,
          MASS_BENCH_KEY: 'none',
          QWEN_TELEMETRY_ENABLED: 'false',
          QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
          QWEN_CODE_NO_RELAUNCH: 'true',
          ...(run.compileCacheDirectory ? { NODE_COMPILE_CACHE: run.compileCacheDirectory } : {}),
        },
      },
    );
    child.stdin.end(run.prompt);
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`the bare harness exited with ${code}`)),
    );
  });
  return performance.now() - started;
}
