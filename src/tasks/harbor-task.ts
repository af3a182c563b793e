import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';

import { UserError } from '../errors.js';
import { durationSchema } from '../timer-duration.js';
import { describeIssues } from './manifest-errors.js';
import { isDirectory } from './file-kind.js';
import { inspectTaskFolder, readTaskText, UnsafeHarborTask } from './harbor-task-files.js';

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
/**
 * Variables by name: a POSIX name (a name with `=` or a NUL byte cannot be set, and would fail only once a trial runs)
 * and a value without NUL bytes.
 */
const Environment = z
  .record(
    z.string(),
    z.union([
      z.string().refine((value) => !value.includes('\0'), 'a value without NUL bytes'),
      z.number(),
      z.boolean(),
    ]),
  )
  .superRefine((variables, context) => {
    for (const name of Object.keys(variables)) {
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
      context.addIssue({
        code: 'custom',
        path: [name],
        message: 'a variable name is letters, digits and "_", not starting with a digit',
      });
    }
  });
/** An image reference as the engine takes it (`name[:tag][@digest]`): never an option (`-…`), no spaces. */
const ImageReference = z
  .string()
  .max(255)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$/,
    'an image reference such as "python:3.12-slim" or "ghcr.io/org/image@sha256:…"',
  );
/** A user inside the task's environment, by name or uid (`name`, `1000`, `name:group`), as `docker exec --user` takes it. */
const User = z
  .union([
    z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})?$/),
    z.number().int().nonnegative(),
  ])
  .transform(String);
/** An absolute folder, normalised, never the root nor one the sandbox provides itself. */
const StatePath = z
  .string()
  .regex(/^(\/[A-Za-z0-9_.-]+)+$/, 'an absolute folder such as "/app"')
  .refine(
    (value) => path.posix.normalize(value) === value && !value.split('/').includes('..'),
    'a normalised path',
  )
  .refine(
    (value) =>
      ![
        '/proc',
        '/dev',
        '/sys',
        '/tmp',
        '/usr',
        '/etc',
        '/bin',
        '/lib',
        '/lib64',
        '/sbin',
        '/run',
        '/workspace',
        '/tests',
        '/logs',
        '/solution',
      ].some((reserved) => value === reserved || value.startsWith(`${reserved}/`)),
    "a folder of its own (not under /usr, /etc, /tmp, /run, /workspace, /tests, /logs, /solution or the kernel's)",
  );

const HarborTaskToml = z
  .object({
    version: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    verifier: z
      .object({ timeout_sec: Seconds.optional(), env: Environment.optional(), user: User.optional() })
      .loose()
      .optional(),
    agent: z.object({ timeout_sec: Seconds.optional(), user: User.optional() }).loose().optional(),
    environment: z
      .object({
        build_timeout_sec: Seconds.optional(),
        docker_image: ImageReference.optional(),
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
        env: Environment.optional(),
        /** mass's own: absolute folders outside the workspace a bubblewrap trial keeps for its verifier. */
        state_paths: z.array(StatePath).max(16).optional(),
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
  /** `[environment.env]`: variables every process of the trial gets (agent, oracle and verifier). */
  environmentEnv: Record<string, string>;
  /** `[agent] user` / `[verifier] user`: who runs the agent (and the oracle) and the verifier; null: the image's. */
  agentUser: string | null;
  verifierUser: string | null;
  /** `[environment] state_paths` (mass's own): folders outside the workspace a bubblewrap trial keeps for its verifier. */
  statePaths: string[];
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
  // lstat: a task.toml that is a link still marks a task, which loading then refuses with the reason.
  return lstat(path.join(dir, HARBOR_TASK_FILE)).then(
    () => true,
    () => false,
  );
}

/** Loads and checks one Harbor task folder; every problem is named with its file. */
export async function loadHarborTask(taskDir: string): Promise<HarborTask> {
  const dir = path.resolve(taskDir);
  const tomlPath = path.join(dir, HARBOR_TASK_FILE);
  const dirStats = await lstat(dir).catch(() => null);
  if (dirStats?.isSymbolicLink()) {
    throw new UnsafeHarborTask(dir, `${dir} is a symbolic link: a task is a folder, never followed`);
  }
  const text = await readTaskText(dir, HARBOR_TASK_FILE);
  if (text === null) {
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
  const instructionText = await readTaskText(dir, HARBOR_INSTRUCTION_FILE);
  const instruction = instructionText ?? '';
  // Before anything else is reported: a link or special file anywhere is the reason the task is skipped.
  const allEnvironmentFiles = await inspectTaskFolder(dir, 'environment');
  const testFiles = await inspectTaskFolder(dir, 'tests');
  const solutionFiles = await inspectTaskFolder(dir, 'solution');
  if (instructionText === null) {
    problems.push(`${instructionPath}: file not found; it holds the task given to the agent`);
  } else if (instruction.trim() === '') {
    problems.push(`${instructionPath}: the instruction is empty`);
  }
  if (!testFiles.includes('test.sh')) {
    problems.push(`${path.join(dir, HARBOR_TEST_SCRIPT)}: file not found; it is the task's verifier`);
  }
  if (problems.length > 0) throw new UserError(problems.join('\n'));

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
    environmentEnv: stringValues(environment.env ?? {}),
    agentUser: toml.agent?.user ?? null,
    verifierUser: toml.verifier?.user ?? null,
    statePaths: [...new Set(environment.state_paths ?? [])],
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
    hasSolution: solutionFiles.includes('solve.sh'),
  };
}

/** A task of a dataset that was not loaded because of what its folder holds, and why (the path named). */
export interface RefusedHarborTask {
  task: string;
  reason: string;
}

/**
 * The Harbor tasks of the given folders: a folder with a task.toml is one task, any other is a dataset whose
 * subfolders with a task.toml are its tasks (sorted by name). A task whose folder holds a symbolic link, a special file
 * or files past the limits (`HARBOR_FILE_LIMITS`), or that is a link itself, is refused with the path and the reason,
 * and the others load; a malformed task.toml stops everything, as before anything runs. A name given twice is refused.
 */
export async function loadHarborDataset(
  folders: readonly string[],
): Promise<{ tasks: HarborTask[]; refused: RefusedHarborTask[] }> {
  const tasks: HarborTask[] = [];
  const refused: RefusedHarborTask[] = [];
  const load = async (taskDir: string): Promise<void> => {
    try {
      tasks.push(await loadHarborTask(taskDir));
    } catch (error) {
      if (!(error instanceof UnsafeHarborTask)) throw error;
      refused.push({ task: path.basename(taskDir), reason: error.reason });
    }
  };
  for (const folder of folders) {
    const dir = path.resolve(folder);
    if (!(await isDirectory(dir))) throw new UserError(`--tasks ${folder}: no such folder`);
    if (await isHarborTaskDir(dir)) {
      await load(dir);
      continue;
    }
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    let found = 0;
    for (const entry of entries) {
      const entryDir = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        refused.push({
          task: entry.name,
          reason: `${entryDir} is a symbolic link: a task is a folder of its dataset, never followed`,
        });
      } else if (entry.isDirectory() && (await isHarborTaskDir(entryDir))) {
        found++;
        await load(entryDir);
      }
    }
    if (found === 0) {
      throw new UserError(
        `--tasks ${folder}: neither a Harbor task (no ${HARBOR_TASK_FILE}) nor a dataset of them (no subfolder has one)`,
      );
    }
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
  return { tasks, refused };
}

/** The tasks of `loadHarborDataset`, refusing the whole set when one is refused (for a caller with no skip list). */
export async function loadHarborTasks(folders: readonly string[]): Promise<HarborTask[]> {
  const { tasks, refused } = await loadHarborDataset(folders);
  if (refused.length > 0) {
    throw new UserError(refused.map((task) => `task ${task.task}: ${task.reason}`).join('\n'));
  }
  return tasks;
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
