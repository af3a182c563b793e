import { createHash } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { stringify } from 'yaml';

import { UserError } from '../../errors.js';
import { SUITE_FILE, TASK_FILE } from '../load-task.js';
import { namedDeliverables } from './named-deliverables.js';
import { namedHosts, type NamedHosts } from './named-hosts.js';
import { readOfficialCheckout, type OfficialCheckout, type OfficialTask } from './official-checkout.js';
import { teamText } from './team-text.js';

/**
 * `mass tasks import-official`: a suite in the user's own folder built from a checkout of the official MASS
 * repository. Each task keeps its bare query as given (`prompt.md`) and its initial team as free text (`team.md`, what
 * the initial file adds to the query); its network allows the public hosts it names (what it leaves out, and why, is
 * printed and recorded); it has no grader, so evaluations of it rest on the external judges. The suite carries the
 * official teacher directive. `import.json` records where every file came from, with its SHA-256, and the official
 * post-training split. The checkout is read through `readCheckoutFile` alone, and a file made from checkout files is
 * no more readable than they are.
 */

export const IMPORT_RECORD_FILE = 'import.json';
const PROMPT_FILE = 'prompt.md';
const TEAM_FILE = 'team.md';
const TEACHER_DIRECTIVE_FILE = 'teacher-directive.md';

export interface ImportedTask {
  id: string;
  number: number;
  domain: string;
  split: 'train' | 'test';
  sft: boolean;
  excludedFromCollection: string | null;
  deliverables: number;
  /** The network allow-list written. */
  hosts: string[];
  /** What the task's text names that the allow-list leaves out (IP addresses, local and metadata names), and why. */
  hostsLeftOut: NamedHosts['leftOut'];
  /** Said when the initial file does not open with the bare query, so the whole file became the team text. */
  warning: string | null;
}

export interface OfficialImport {
  suiteDir: string;
  name: string;
  tasks: ImportedTask[];
  teacherDirective: boolean;
}

export async function importOfficialTasks(checkoutDir: string, outDir: string): Promise<OfficialImport> {
  const checkout = await readOfficialCheckout(checkoutDir);
  const suiteDir = path.resolve(outDir);
  await assertFreshFolder(suiteDir);
  const name = path.basename(suiteDir);
  const staging = `${suiteDir}.staging-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  try {
    const tasks: ImportedTask[] = [];
    for (const task of checkout.tasks) tasks.push(await writeTask(staging, task));
    const train = tasks.filter((task) => task.split === 'train').length;
    const suite: Record<string, unknown> = {
      schemaVersion: 1,
      name,
      description:
        `The official MASS research tasks (${tasks.length}: ${train} train, ${tasks.length - train} test), ` +
        'imported with mass tasks import-official: bare queries, free-text initial teams, no graders.',
    };
    if (checkout.teacherDirective !== null) {
      await writeFile(path.join(staging, TEACHER_DIRECTIVE_FILE), checkout.teacherDirective.text, {
        mode: checkout.teacherDirective.mode,
      });
      suite.teacherDirective = { file: TEACHER_DIRECTIVE_FILE };
    }
    await writeFile(path.join(staging, SUITE_FILE), stringify(suite, { lineWidth: 0 }));
    await writeFile(
      path.join(staging, IMPORT_RECORD_FILE),
      `${JSON.stringify(await importRecord(checkout.dir, checkout.tasks, tasks, checkout.teacherDirective), null, 2)}\n`,
    );
    await rm(suiteDir, { recursive: true, force: true });
    await rename(staging, suiteDir);
    return { suiteDir, name, tasks, teacherDirective: checkout.teacherDirective !== null };
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

async function writeTask(suiteDir: string, task: OfficialTask): Promise<ImportedTask> {
  const id = `query${task.number}`;
  const team = teamText(task.bare, task.initial);
  const deliverables = namedDeliverables(task.bare);
  const named = namedHosts(`${task.bare}\n${team.text}`);
  const manifest = {
    schemaVersion: 1,
    id,
    title: titleOf(task.bare),
    domain: task.domain,
    split: task.split,
    prompt: { file: PROMPT_FILE },
    deliverables,
    environment: { network: named.allow.length > 0 ? { allow: named.allow } : false },
    workflow: { text: { file: TEAM_FILE } },
  };
  const dir = path.join(suiteDir, id);
  await mkdir(dir);
  const mode = { mode: task.mode };
  await writeFile(path.join(dir, PROMPT_FILE), task.bare, mode);
  await writeFile(path.join(dir, TEAM_FILE), `${team.text}\n`, mode);
  const leftOut = named.leftOut.map((host) => `#   ${host.entry}: ${host.why}\n`).join('');
  await writeFile(
    path.join(dir, TASK_FILE),
    `# Imported from ${task.files.bare} and ${task.files.initial} of the official MASS repository.\n` +
      `# Review environment.network.allow: it lists the public hosts the task names.\n` +
      (leftOut === ''
        ? ''
        : `# Left out of it (the run configuration, not a task, opens such destinations):\n${leftOut}`) +
      stringify(manifest, { lineWidth: 0 }),
    mode,
  );
  return {
    id,
    number: task.number,
    domain: task.domain,
    split: task.split,
    sft: task.sft,
    excludedFromCollection: task.excludedFromCollection,
    deliverables: deliverables.length,
    hosts: named.allow,
    hostsLeftOut: named.leftOut,
    warning: team.opensWithTask
      ? null
      : `${task.files.initial} does not open with the text of ${task.files.bare}: the whole file is the team text`,
  };
}

/** The query's first sentence, at most 120 characters. */
function titleOf(bare: string): string {
  const firstLine = bare.replaceAll('\\n', '\n').trim().split('\n')[0]!.trim();
  const sentence = firstLine.split(/(?<=[.!?])\s/)[0]!;
  if (sentence.length <= 120) return sentence.replace(/\.$/, '');
  return `${sentence.slice(0, 117).replace(/\s+\S*$/, '')}…`;
}

async function importRecord(
  checkoutDir: string,
  official: OfficialTask[],
  imported: ImportedTask[],
  teacherDirective: OfficialCheckout['teacherDirective'],
): Promise<unknown> {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  return {
    schemaVersion: 1,
    source: checkoutDir,
    tasks: imported.map((task, index) => ({
      id: task.id,
      officialId: task.number,
      domain: task.domain,
      split: task.split,
      sftTrain: task.sft,
      excludedFromTeacherCollection: task.excludedFromCollection,
      networkAllow: task.hosts,
      networkLeftOut: task.hostsLeftOut,
      files: {
        [official[index]!.files.bare]: sha256(official[index]!.bare),
        [official[index]!.files.initial]: sha256(official[index]!.initial),
      },
    })),
    teacherDirective: teacherDirective === null ? null : { sha256: sha256(teacherDirective.text) },
  };
}

async function assertFreshFolder(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw new UserError(`--out ${dir}: a file is in the way; choose a new folder`);
    }
    throw error;
  }
  if (entries.length > 0) {
    throw new UserError(
      `--out ${dir}: the folder is not empty; the importer writes a new suite and never overwrites one: choose a new folder or remove this one`,
    );
  }
}
