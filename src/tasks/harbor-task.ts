import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';

import { UserError } from '../errors.js';
import { durationSchema } from '../timer-duration.js';
import { describeIssues } from './manifest-errors.js';
import { isDirectory, isFile } from './file-kind.js';

/**
 * A task in Harbor's format (the format Terminal-Bench 2.0 and Harbor's adapters ship): a folder with `task.toml`,
 * `instruction.md`, `environment/` (the files the agent starts with, and a Dockerfile or compose file when the task
 * needs its own container), `tests/test.sh` (the verifier, run after the agent) and optionally `solution/solve.sh`
 * (the reference solution). Only the fields mass acts on are checked; the others (metadata, MCP servers, fields of
 * later versions) are kept as they are, never refused.
 */
export const HARBOR_TASK_FILE = 'task.toml';
export const HARBOR_INSTRUCTION_FILE = 'instruction.md';
export const HARBOR_TEST_SCRIPT = 'tests/test.sh';
export const HARBOR_SOLUTION_SCRIPT = 'solution/solve.sh';
/** Files of `environment/` that describe a container: never copied into a workspace. */
const CONTAINER_FILES = new Set(['Dockerfile', 'docker-compose.yaml', 'docker-compose.yml', '.dockerignore']);

/** A timeout past Node's timer range (about 24.8 days) would fire at once: refused with the field named. */
const Seconds = durationSchema({ unit: 's' });
const Environment = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

const HarborTaskToml = z
  .object({
    version: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    verifier: z.object({ timeout_sec: Seconds.optional(), env: Environment.optional() }).loose().optional(),
    agent: z.object({ timeout_sec: Seconds.optional() }).loose().optional(),
    environment: z
      .object({
        build_timeout_sec: Seconds.optional(),
        docker_image: z.string().min(1).optional(),
        cpus: z.number().positive().optional(),
        memory: z
          .string()
          .regex(/^\d+(\.\d+)?[KMGT]?$/i, 'a size such as "2G" or "512M"')
          .optional(),
        memory_mb: z.number().int().positive().optional(),
        storage: z
          .string()
          .regex(/^\d+(\.\d+)?[KMGT]?$/i, 'a size such as "10G"')
          .optional(),
        storage_mb: z.number().int().positive().optional(),
        gpus: z.number().int().nonnegative().optional(),
        allow_internet: z.boolean().optional(),
      })
      .loose()
      .optional(),
    solution: z.object({ env: Environment.optional() }).loose().optional(),
  })
  .loose();

/** Harbor's defaults for what a task.toml leaves out. */
const DEFAULT_AGENT_TIMEOUT_SEC = 600;
const DEFAULT_VERIFIER_TIMEOUT_SEC = 600;
const DEFAULT_BUILD_TIMEOUT_SEC = 600;

export interface HarborTask {
  /** Absolute path of the task folder; its name is the task's. */
  dir: string;
  name: string;
  tomlPath: string;
  instruction: string;
  metadata: Record<string, unknown>;
  agentTimeoutSec: number;
  verifierTimeoutSec: number;
  /** How long building or pulling its own image may take. */
  buildTimeoutSec: number;
  verifierEnv: Record<string, string>;
  solutionEnv: Record<string, string>;
  /** Files of `environment/` an agent starts with, relative to it and sorted (a container's own files left out). */
  environmentFiles: string[];
  /** What the task needs to run: its own image, a Dockerfile, a compose file, or only the host's programs. */
  container: { image: string | null; dockerfile: boolean; compose: boolean };
  memoryBytes: number | null;
  storageBytes: number | null;
  cpus: number | null;
  gpus: number;
  /** Harbor's default is true: a task that leaves it out asks for the open internet. */
  allowInternet: boolean;
  hasSolution: boolean;
}

/** Whether `dir` holds a Harbor task (a task.toml). */
export async function isHarborTaskDir(dir: string): Promise<boolean> {
  return isFile(path.join(dir, HARBOR_TASK_FILE));
}

/** Loads and checks one Harbor task folder; every problem is named with its file. */
export async function loadHarborTask(taskDir: string): Promise<HarborTask> {
  const dir = path.resolve(taskDir);
  const tomlPath = path.join(dir, HARBOR_TASK_FILE);
  let text: string;
  try {
    text = await readFile(tomlPath, 'utf8');
  } catch {
    throw new UserError(
      `${tomlPath}: file not found. A Harbor task folder holds task.toml, instruction.md and tests/test.sh`,
    );
  }
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (error) {
    const first = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    throw new UserError(`${tomlPath}: not valid TOML: ${first}. Fix the syntax and run again.`);
  }
  const parsed = HarborTaskToml.safeParse(raw);
  if (!parsed.success) {
    throw new UserError(
      `${describeIssues(tomlPath, parsed.error.issues).join('\n')}\nFix it in ${tomlPath}.`,
    );
  }
  const toml = parsed.data;
  const problems: string[] = [];
  const name = path.basename(dir);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) {
    problems.push(`${dir}: a task folder's name is letters, digits, ".", "_" and "-" (found "${name}")`);
  }
  const instructionPath = path.join(dir, HARBOR_INSTRUCTION_FILE);
  let instruction = '';
  if (!(await isFile(instructionPath))) {
    problems.push(`${instructionPath}: file not found; it holds the task given to the agent`);
  } else {
    instruction = await readFile(instructionPath, 'utf8');
    if (instruction.trim() === '') problems.push(`${instructionPath}: the instruction is empty`);
  }
  if (!(await isFile(path.join(dir, HARBOR_TEST_SCRIPT)))) {
    problems.push(`${path.join(dir, HARBOR_TEST_SCRIPT)}: file not found; it is the task's verifier`);
  }
  if (problems.length > 0) throw new UserError(problems.join('\n'));

  const environmentDir = path.join(dir, 'environment');
  const allEnvironmentFiles = (await isDirectory(environmentDir)) ? await regularFiles(environmentDir) : [];
  const environment = toml.environment ?? {};
  return {
    dir,
    name,
    tomlPath,
    instruction,
    metadata: toml.metadata ?? {},
    agentTimeoutSec: toml.agent?.timeout_sec ?? DEFAULT_AGENT_TIMEOUT_SEC,
    verifierTimeoutSec: toml.verifier?.timeout_sec ?? DEFAULT_VERIFIER_TIMEOUT_SEC,
    buildTimeoutSec: environment.build_timeout_sec ?? DEFAULT_BUILD_TIMEOUT_SEC,
    verifierEnv: stringValues(toml.verifier?.env ?? {}),
    solutionEnv: stringValues(toml.solution?.env ?? {}),
    environmentFiles: allEnvironmentFiles.filter((file) => !CONTAINER_FILES.has(file)),
    container: {
      image: environment.docker_image ?? null,
      dockerfile: allEnvironmentFiles.includes('Dockerfile'),
      compose: allEnvironmentFiles.some((file) => file.startsWith('docker-compose.')),
    },
    memoryBytes: bytesOf(environment.memory_mb, environment.memory),
    storageBytes: bytesOf(environment.storage_mb, environment.storage),
    cpus: environment.cpus ?? null,
    gpus: environment.gpus ?? 0,
    allowInternet: environment.allow_internet ?? true,
    hasSolution: await isFile(path.join(dir, HARBOR_SOLUTION_SCRIPT)),
  };
}

/**
 * The Harbor tasks of the given folders: a folder with a task.toml is one task, any other is a dataset whose
 * subfolders with a task.toml are its tasks (sorted by name). A name given twice is refused.
 */
export async function loadHarborTasks(folders: readonly string[]): Promise<HarborTask[]> {
  const tasks: HarborTask[] = [];
  for (const folder of folders) {
    const dir = path.resolve(folder);
    if (!(await isDirectory(dir))) throw new UserError(`--tasks ${folder}: no such folder`);
    if (await isHarborTaskDir(dir)) {
      tasks.push(await loadHarborTask(dir));
      continue;
    }
    const entries = (await readdir(dir, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    const found: string[] = [];
    for (const entry of entries) {
      if (await isHarborTaskDir(path.join(dir, entry))) found.push(entry);
    }
    if (found.length === 0) {
      throw new UserError(
        `--tasks ${folder}: neither a Harbor task (no ${HARBOR_TASK_FILE}) nor a dataset of them (no subfolder has one)`,
      );
    }
    for (const entry of found) tasks.push(await loadHarborTask(path.join(dir, entry)));
  }
  const seen = new Map<string, string>();
  for (const task of tasks) {
    const earlier = seen.get(task.name);
    if (earlier !== undefined) {
      throw new UserError(
        `two tasks are named ${task.name}: ${earlier} and ${task.dir}; give one of them once`,
      );
    }
    seen.set(task.name, task.dir);
  }
  return tasks;
}

async function regularFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

function stringValues(values: Record<string, string | number | boolean>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, String(value)]));
}

const UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

function bytesOf(megabytes: number | undefined, size: string | undefined): number | null {
  if (megabytes !== undefined) return megabytes * 1024 ** 2;
  if (size === undefined) return null;
  const [, number, unit] = /^(\d+(?:\.\d+)?)([KMGT]?)$/i.exec(size)!;
  return Math.round(Number(number) * UNITS[unit!.toUpperCase()]!);
}
