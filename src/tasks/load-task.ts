import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { parseDocument } from 'yaml';
import type { z } from 'zod';

import { UserError } from '../errors.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { isFile } from './file-kind.js';
import { harborLoadedTask } from './harbor-loaded-task.js';
import { isHarborTaskDir, loadHarborTask, type HarborTask } from './harbor-task.js';
import { DOMAIN_JUDGES, type ResolvedJudge } from './judge-defaults.js';
import { TaskManifest, withheldFolders } from './manifest.js';
import { describeIssues } from './manifest-errors.js';
import { SuiteManifest } from './suite-manifest.js';

export const TASK_FILE = 'task.yaml';
export const SUITE_FILE = 'suite.yaml';

/** The manifest with its v0 team read: a free-text team given as a file is its text. */
export type LoadedManifest = Omit<TaskManifest, 'workflow'> & { workflow: TeamDesign };

export interface LoadedTask {
  /** Absolute path of the task folder. */
  dir: string;
  manifestPath: string;
  manifest: LoadedManifest;
  /** The task text in Markdown (the manifest's inline prompt or the contents of its prompt file). */
  prompt: string;
  judge: ResolvedJudge;
  /** Absolute folders whose files must never reach a workspace, a prompt or any role. */
  withheldDirs: string[];
  /** The suite's own teacher directive (its `suite.yaml`'s `teacherDirective`); null: this project's. */
  teacherDirective: string | null;
  /** A task in Harbor's format (`task.toml`), run as its instruction alone; absent for a task.yaml task. */
  harbor?: HarborTask;
}

/** Parses a YAML file and validates it with `schema`; every problem becomes one line naming the file and field. */
export async function readYamlFile<T>(file: string, schema: z.ZodType<T>): Promise<T> {
  const text = await readTextOrThrow(file);
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    // Later YAML errors are mostly consequences of the first; one precise message helps more than a cascade.
    const first = document.errors[0]!.message.split('\n')[0];
    throw new UserError(
      `${file}: not valid YAML: ${first}. Fix the syntax (quote text that contains ": ", "[" or "{") and run \`mass tasks validate\` again.`,
    );
  }
  const parsed = schema.safeParse(document.toJS());
  if (!parsed.success) {
    const lines = describeIssues(file, parsed.error.issues);
    throw new UserError(
      `${lines.join('\n')}\nFix ${lines.length === 1 ? 'this field' : 'these fields'} in ${file}.`,
    );
  }
  return parsed.data;
}

async function readTextOrThrow(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new UserError(
        `${file}: file not found. A task folder holds a ${TASK_FILE}; pass the folder that has one.`,
      );
    }
    throw error;
  }
}

/**
 * Loads and checks one task folder: the manifest, its prompt, and that every file it names exists. A folder with a
 * Harbor task.toml and no task.yaml is a Harbor task (`harbor-loaded-task.ts`).
 */
export async function loadTask(taskDir: string): Promise<LoadedTask> {
  const dir = path.resolve(taskDir);
  const manifestPath = path.join(dir, TASK_FILE);
  if (!(await isFile(manifestPath)) && (await isHarborTaskDir(dir))) {
    return harborLoadedTask(await loadHarborTask(dir));
  }
  const manifest = await readYamlFile(manifestPath, TaskManifest);
  const problems: string[] = [];
  const field = (name: string, message: string) =>
    problems.push(`${manifestPath}: field "${name}": ${message}`);

  const folderName = path.basename(dir);
  if (manifest.id !== folderName) {
    field('id', `"${manifest.id}" differs from its folder name "${folderName}"; rename one so they match`);
  }

  let prompt = '';
  if (typeof manifest.prompt === 'string') {
    prompt = manifest.prompt;
  } else if (await isFile(path.join(dir, manifest.prompt.file))) {
    prompt = await readFile(path.join(dir, manifest.prompt.file), 'utf8');
    if (prompt.trim() === '') field('prompt.file', `"${manifest.prompt.file}" is empty`);
  } else {
    field('prompt.file', `"${manifest.prompt.file}" does not exist in the task folder`);
  }

  let workflow: TeamDesign | undefined;
  if (!('text' in manifest.workflow)) {
    workflow = manifest.workflow;
  } else if (typeof manifest.workflow.text === 'string') {
    workflow = { schemaVersion: 1, text: manifest.workflow.text };
  } else if (await isFile(path.join(dir, manifest.workflow.text.file))) {
    const text = await readFile(path.join(dir, manifest.workflow.text.file), 'utf8');
    if (text.trim() === '') field('workflow.text.file', `"${manifest.workflow.text.file}" is empty`);
    workflow = { schemaVersion: 1, text };
  } else {
    field('workflow.text.file', `"${manifest.workflow.text.file}" does not exist in the task folder`);
  }

  for (const [index, file] of manifest.inputs.files.entries()) {
    if (!(await isFile(path.join(dir, file.from)))) {
      field(`inputs.files[${index}].from`, `"${file.from}" does not exist in the task folder`);
    }
  }
  const generator = manifest.inputs.generator;
  if (generator && !(await isFile(path.join(dir, generator.script)))) {
    field('inputs.generator.script', `"${generator.script}" does not exist in the task folder`);
  }
  if (manifest.oracle && !(await isFile(path.join(dir, manifest.oracle.grader)))) {
    field('oracle.grader', `"${manifest.oracle.grader}" does not exist in the task folder`);
  }

  const defaults = DOMAIN_JUDGES[manifest.domain];
  const persona = manifest.judge.persona ?? defaults?.persona;
  const lens = manifest.judge.lens ?? defaults?.lens;
  if (!persona || !lens) {
    field(
      'judge',
      `domain "${manifest.domain}" has no built-in judge; set judge.persona and judge.lens (built-in domains: ${Object.keys(DOMAIN_JUDGES).join(', ')})`,
    );
  }

  if (problems.length > 0) throw new UserError(problems.join('\n'));

  const suite = await suiteSettings(path.dirname(dir));
  return {
    dir,
    manifestPath,
    manifest: { ...manifest, workflow: workflow! },
    prompt,
    judge: { persona: persona!, lens: lens!, focus: manifest.judge.focus ?? null },
    withheldDirs: [
      ...withheldFolders(manifest).map((folder) => path.join(dir, folder)),
      ...suite.withheldDirs,
    ],
    teacherDirective: suite.teacherDirective,
  };
}

/**
 * What the `suite.yaml` of the folder holding a task, if there is one, says of every task: its withheld folders and
 * its teacher directive.
 */
async function suiteSettings(
  suiteDir: string,
): Promise<{ withheldDirs: string[]; teacherDirective: string | null }> {
  const suiteFile = path.join(suiteDir, SUITE_FILE);
  if (!(await isFile(suiteFile))) return { withheldDirs: [], teacherDirective: null };
  const suite = await readYamlFile(suiteFile, SuiteManifest);
  let teacherDirective: string | null = null;
  if (suite.teacherDirective) {
    const file = path.join(suiteDir, suite.teacherDirective.file);
    if (!(await isFile(file))) {
      throw new UserError(
        `${suiteFile}: field "teacherDirective.file": "${suite.teacherDirective.file}" does not exist in the suite folder`,
      );
    }
    teacherDirective = await readFile(file, 'utf8');
    if (teacherDirective.trim() === '') {
      throw new UserError(
        `${suiteFile}: field "teacherDirective.file": "${suite.teacherDirective.file}" is empty`,
      );
    }
  }
  return { withheldDirs: suite.withheld.map((folder) => path.join(suiteDir, folder)), teacherDirective };
}
