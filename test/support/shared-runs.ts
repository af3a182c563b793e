import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { inject } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { runMass, type CliResult } from './cli.js';

/**
 * Runs, and the trainer's tiny models, that several end-to-end files read, built once per end-to-end run: the first
 * file to ask builds it (the others, in other workers, wait for it), in the folder the tier's global setup made
 * (shared-runs-setup.ts). What a file gets is read-only: a file that writes into a run copies it first
 * (`copySharedRun`).
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder of this end-to-end run's shared runs (shared-runs-setup.ts). */
    sharedRuns: string;
  }
}

/** A shared run: its `--runs` folder, its run directory, its configuration file, and what the command that made it printed. */
export interface SharedRun {
  runs: string;
  run: string;
  configFile: string;
  result: CliResult;
}

/**
 * `mass search` on the toy model (`model: { kind: toy }`) of one demo task, the reference and v0 with one verdict, no
 * iteration after v0; its `distill` section is the one test/cli/search.e2e.test.ts distils with.
 */
export const TOY_SEARCH_CONFIG = [
  'name: toy-search',
  `suite: ${DEMO_SUITE}`,
  'tasks: [demo-volatility]',
  'model: { kind: toy }',
  'roles: { executor: { model: mass-toy } }',
  'search: { iterations: 0 }',
  'distill: { runs: 3, needed: 2, maxTopUps: 0, ringOpponents: 2, train: 1, validation: 1 }',
  '',
].join('\n');

const execFileAsync = promisify(execFile);
const TINY_MODELS = fileURLToPath(new URL('../train/python/tiny_models.py', import.meta.url));

const building = new Map<string, Promise<unknown>>();

/** The toy search of `TOY_SEARCH_CONFIG`, run with `mass search --json`. Read-only. */
export function sharedToySearch(): Promise<SharedRun> {
  return shared('toy-search', async (folder) => {
    const configFile = join(folder, 'toy-search.yaml');
    writeFileSync(configFile, TOY_SEARCH_CONFIG);
    const runs = join(folder, 'runs');
    const result = await runMass(['search', '--config', configFile, '--runs', runs, '--json']);
    return { runs, run: join(runs, 'toy-search'), configFile, result };
  });
}

/**
 * `mass search` on the toy model of both demo tasks, one iteration after v0, the executor served as generation L0; its
 * `evaluation` section judges the searches from outside (`searchCoverage`) and runs no episode. Read by
 * test/analyze/workflow-information.e2e.test.ts (the workflow analysis needs two tasks and a v1) and
 * test/compare/compare.e2e.test.ts (its evaluated run); both write into it, so both copy it.
 */
export const DEMO_SEARCH_CONFIG = [
  'name: demo-search',
  `suite: ${DEMO_SUITE}`,
  'tasks: [demo-potency, demo-volatility]',
  'model: { kind: toy }',
  'roles: { executor: { model: toy-L0 } }',
  'search: { iterations: 1 }',
  'budgets: { episodeTimeoutSeconds: 150 }',
  'concurrency: { episodes: 3, judgments: 2, tasks: 2 }',
  'rsi: { servedAs: "toy-{generation}" }',
  // `comparisons: []` runs no episode and needs no registered generation (a `mass search` run has none).
  'evaluation:',
  '  comparisons: []',
  '  judgeSeeds: 1',
  '  selfJudge: false',
  '  judges: [{ model: toy-judge, name: toy }]',
  '  searchCoverage: true',
  '',
].join('\n');

/** The search of `DEMO_SEARCH_CONFIG`, run with `mass search --skip-doctor`. Read-only: copy it to write into it. */
export function sharedDemoSearch(): Promise<SharedRun> {
  return shared('demo-search', async (folder) => {
    const configFile = join(folder, 'demo-search.yaml');
    writeFileSync(configFile, DEMO_SEARCH_CONFIG);
    const runs = join(folder, 'runs');
    const result = await runMass(['search', '--config', configFile, '--runs', runs, '--skip-doctor']);
    return { runs, run: join(runs, 'demo-search'), configFile, result };
  });
}

/** One of the tiny random models of test/train/python/tiny_models.py: its folder, its size, its linear layers. */
export interface TinyModel {
  path: string;
  parameters: number;
  linearLayers: string[];
}

/** What the trainer's tests add to a torch Python's environment: no bytecode written, no hub, quiet tokenizers. */
export const TORCH_ENVIRONMENT = {
  PYTHONDONTWRITEBYTECODE: '1',
  HF_HUB_OFFLINE: '1',
  TOKENIZERS_PARALLELISM: 'false',
};

/**
 * The tiny random Qwen3 and Qwen3.5 that `tiny_models.py build` makes, built once by the trainer's `python` (importing
 * torch and transformers is most of its cost). Read-only: a test trains from them and writes elsewhere.
 */
export function sharedTinyModels(python: string): Promise<Record<'qwen3' | 'qwen3_5', TinyModel>> {
  return shared('tiny-models', async (folder) => {
    const { stdout } = await execFileAsync(python, [TINY_MODELS, 'build', join(folder, 'models')], {
      encoding: 'utf8',
      env: { ...process.env, ...TORCH_ENVIRONMENT },
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout) as Record<'qwen3' | 'qwen3_5', TinyModel>;
  });
}

/** A shared run's directory copied to `runs/<its name>`, for a test that writes into it. */
export function copySharedRun(shared: SharedRun, runs: string): string {
  const copy = join(runs, shared.run.slice(shared.runs.length + 1));
  cpSync(shared.run, copy, { recursive: true });
  return copy;
}

/** The longest a file waits for another worker to build a shared run. */
const WAIT_MS = 600_000;

/**
 * Builds `name` once for the whole end-to-end run: whoever makes its folder first builds it and writes `done.json`
 * (or `failed.json`, which every waiter then throws); the rest poll for it.
 */
function shared<T>(name: string, build: (folder: string) => Promise<T>): Promise<T> {
  const started = (building.get(name) as Promise<T> | undefined) ?? claimOrWait(name, build);
  building.set(name, started);
  return started;
}

async function claimOrWait<T>(name: string, build: (folder: string) => Promise<T>): Promise<T> {
  const folder = join(inject('sharedRuns'), name);
  const done = join(folder, 'done.json');
  const failed = join(folder, 'failed.json');
  let claimed = true;
  try {
    mkdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    claimed = false;
  }
  if (claimed) {
    try {
      const run = await build(folder);
      writeFileSync(done, JSON.stringify(run));
      return run;
    } catch (error) {
      writeFileSync(failed, JSON.stringify({ error: String(error) }));
      throw error;
    }
  }
  for (let waited = 0; waited < WAIT_MS; waited += 250) {
    if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8')) as T;
    if (existsSync(failed))
      throw new Error(
        `shared run ${name}: its build failed in another file: ${readFileSync(failed, 'utf8')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`shared run ${name}: not built by another file within ${WAIT_MS / 1000} s (${folder})`);
}
