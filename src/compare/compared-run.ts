import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import YAML from 'yaml';

import { roleEndpoints, RunConfig, type Endpoint } from '../config/run-config.js';
import { UserError, errorMessage } from '../errors.js';
import { EvaluationSummaryRecord } from '../records/evaluation-records.js';
import {
  byGenerationName,
  loopSearchCoverage,
  type LoopGenerationCoverage,
} from '../records/loop-search-coverage.js';
import type { OutsideGenerationCoverage } from '../records/search-coverage-figure.js';
import { readSearches } from '../report/read-run.js';
import { describeIssues } from '../store/describe-issues.js';
import { RunFiles } from '../store/run-files.js';
import { evaluationPath, runFiles } from '../store/run-paths.js';

/** Who played each role of a run, as its configuration names them. */
export interface RunRoles {
  executor: string;
  judge: string;
  optimizer: string;
}

/** One generation's searches of a run: the loop's own coverage, and each evaluation's outside one. */
export interface ComparedGeneration {
  generation: string;
  loop: LoopGenerationCoverage;
  outside: Array<{ evaluation: string; judges: string[]; coverage: OutsideGenerationCoverage }>;
}

/** What `mass compare` shows of one run. */
export interface ComparedRun {
  /** The run's name, made unique among the runs compared (its folder added when two share a name). */
  label: string;
  name: string;
  directory: string;
  roles: RunRoles;
  generations: ComparedGeneration[];
  /** Records that are missing (a search still running) or could not be read: left out, and said. */
  notes: string[];
}

/**
 * Reads what `mass compare` needs from a run directory: its configuration (for the roles), every finished search
 * (`search/<generation>/<task>/result.json`) and every finished evaluation that judged the searches from outside.
 * Each record is read through its schema; one that is missing or malformed is left out with a note naming the file,
 * so a run still going can be compared. A directory with no readable configuration is refused: it is not a run.
 */
export async function readComparedRun(directory: string): Promise<Omit<ComparedRun, 'label'>> {
  const root = resolve(directory);
  const info = await stat(root).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new UserError(`${root} is not a directory: give run directories (e.g. runs/qwen3-search)`);
  }
  const files = new RunFiles(root);
  const config = await readConfig(files);
  const searches = await readSearches(files);
  const outside = new Map<string, ComparedGeneration['outside']>();
  for (const evaluation of await files.folders(runFiles.evaluation)) {
    const summary = await files.record(EvaluationSummaryRecord, evaluationPath(evaluation, 'summary'));
    for (const coverage of summary?.searchCoverage?.generations ?? []) {
      const entries = outside.get(coverage.generation) ?? [];
      entries.push({ evaluation, judges: summary!.searchCoverage!.judges, coverage });
      outside.set(coverage.generation, entries);
    }
  }
  const loop = loopSearchCoverage(searches);
  const names = [...new Set([...loop.map((entry) => entry.generation), ...outside.keys()])].sort(
    byGenerationName,
  );
  const generations = names.flatMap((generation): ComparedGeneration[] => {
    const own = loop.find((entry) => entry.generation === generation);
    // An evaluation of searches whose records are gone has nothing of the loop's own to stand beside.
    return own ? [{ generation, loop: own, outside: outside.get(generation) ?? [] }] : [];
  });
  if (generations.length === 0) files.notes.push(`${runFiles.search}/ holds no finished search`);
  return { name: config.name, directory: root, roles: rolesOf(config), generations, notes: files.notes };
}

/** Every run directory given, read and labelled, in the order given. */
export async function readComparedRuns(directories: readonly string[]): Promise<ComparedRun[]> {
  if (directories.length === 0) throw new UserError('mass compare: give one run directory or more');
  return labelRuns(await Promise.all(directories.map(readComparedRun)));
}

/** Labels the runs by name; runs that share a name are told apart by their folder. */
export function labelRuns(runs: ReadonlyArray<Omit<ComparedRun, 'label'>>): ComparedRun[] {
  return runs.map((run) => {
    const shared = runs.filter((other) => other.name === run.name).length > 1;
    return { ...run, label: shared ? `${run.name} (${run.directory})` : run.name };
  });
}

async function readConfig(files: RunFiles): Promise<RunConfig> {
  const file = join(files.directory, runFiles.config);
  const text = await files.text(runFiles.config);
  if (text === undefined) {
    throw new UserError(
      `${file} is missing: ${files.directory} is not a run directory, or its run never started`,
    );
  }
  let decoded: unknown;
  try {
    decoded = YAML.parse(text);
  } catch (error) {
    throw new UserError(`${file} is not valid YAML: ${errorMessage(error)}`);
  }
  const parsed = RunConfig.safeParse(decoded);
  if (!parsed.success) {
    throw new UserError(
      `${file} is not a valid configuration for this mass (${describeIssues(parsed.error)}); compare runs made by this version`,
    );
  }
  return parsed.data;
}

/**
 * Each role's model, as configured: a role without a model of its own plays the executor's (in `mass rsi`, each
 * generation's), which the label says rather than repeating the name.
 */
export function rolesOf(config: RunConfig): RunRoles {
  const endpoints = roleEndpoints(config);
  const describe = (endpoint: Endpoint) =>
    endpoint.provider === 'openai-compatible' ? endpoint.model : `${endpoint.model} (${endpoint.provider})`;
  return {
    executor: describe(endpoints.executor),
    judge: config.roles.judge ? describe(endpoints.judge) : 'the executor',
    optimizer: config.roles.optimizer ? describe(endpoints.optimizer) : 'the executor',
  };
}
