import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { loadRunConfig } from '../../config/run-config.js';
import { UserError } from '../../errors.js';
import type { OfficialImport } from '../../tasks/official/import-official.js';
import { sandboxedEntryPointRunner } from '../../episode/entry-point-sandbox.js';
import { networkAllowProblems } from '../../tasks/task-network.js';
import { taskTextProblems } from '../../tasks/task-text-checks.js';
import {
  checkSuite,
  gradeWorkspace,
  isFile,
  listFiles,
  loadSuite,
  loadTask,
  materializeWorkspace,
  renderTaskPrompt,
  TASK_FILE,
  taskManifestJsonSchema,
  type Grade,
  type LoadedTask,
} from '../../tasks/index.js';
import { draftGaps, isFreeTextDesign } from '../../workflow/workflow.js';

function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

function parseSeed(value: string): number {
  const seed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(seed)) {
    throw new UserError(`--seed "${value}": use a non-negative integer`);
  }
  return seed;
}

export async function tasksListAction(suiteDir: string, options: { json?: boolean }): Promise<void> {
  const suite = await loadSuite(suiteDir);
  const rows = suite.tasks.map(({ manifest }) => ({
    id: manifest.id,
    domain: manifest.domain,
    split: manifest.split,
    title: manifest.title,
  }));
  if (options.json) return print(JSON.stringify({ suite: suite.name, tasks: rows }, null, 2));
  const width = Math.max(...rows.map((row) => row.id.length));
  print(`${suite.name}: ${rows.length} tasks`);
  for (const row of rows) {
    print(`${row.id.padEnd(width)}  ${row.domain.padEnd(9)} ${row.split.padEnd(5)}  ${row.title}`);
  }
}

export async function tasksShowAction(
  taskDir: string,
  options: { prompt?: boolean; json?: boolean },
): Promise<void> {
  const task = await loadTask(taskDir);
  if (options.prompt) return print(renderTaskPrompt(task));
  if (options.json) return print(JSON.stringify({ ...task.manifest, judge: task.judge }, null, 2));
  print(describeTask(task));
}

export async function tasksValidateAction(
  dir: string,
  options: { generators?: boolean; seed: string; images?: boolean; config?: string },
): Promise<void> {
  const seed = parseSeed(options.seed);
  const images =
    options.images ??
    (options.config ? (await loadRunConfig(options.config)).roles.executor.images === true : false);
  const single = await isFile(path.join(dir, TASK_FILE));
  const check = single ? undefined : await checkSuite(dir);
  const outcomes = single
    ? [await loadTask(dir).then((task) => ({ ok: true as const, dir, task }))]
    : check!.outcomes;
  const problems = [...(check?.suiteProblems ?? [])];
  for (const problem of problems) print(`✗ ${problem}`);
  for (const outcome of outcomes) {
    if (!outcome.ok) {
      problems.push(outcome.error);
      print(`✗ ${path.basename(outcome.dir)}\n${indent(outcome.error)}`);
      continue;
    }
    const found = [
      ...networkAllowProblems(outcome.task.manifest.environment.network).map(
        (problem) => `${path.join(outcome.task.dir, TASK_FILE)}: ${problem}`,
      ),
      ...(await taskTextProblems(outcome.task, { images })),
    ];
    if (found.length > 0) {
      problems.push(...found);
      print(`✗ ${outcome.task.manifest.id}\n${indent(found.join('\n'))}`);
      continue;
    }
    let note = '';
    if (options.generators && outcome.task.manifest.inputs.generator) {
      const determinism = await checkGeneratorDeterminism(outcome.task, seed);
      if (!determinism.same) {
        problems.push(`${outcome.task.manifest.id}: generator is not deterministic`);
        print(`✗ ${outcome.task.manifest.id}: two runs with seed ${seed} wrote different files`);
        continue;
      }
      note = ` (generator deterministic, ${determinism.files} file${determinism.files === 1 ? '' : 's'}, ${determinism.seconds.toFixed(1)} s per run)`;
    }
    print(`✓ ${outcome.task.manifest.id}${note}`);
  }
  if (problems.length > 0) {
    throw new UserError(`${problems.length} problem${problems.length === 1 ? '' : 's'} found in ${dir}`);
  }
  if (!single) print(`${check!.name}: ${outcomes.length} tasks valid`);
}

export async function tasksMaterializeAction(
  taskDir: string,
  workspaceDir: string,
  options: { seed: string; json?: boolean },
): Promise<void> {
  const task = await loadTask(taskDir);
  const workspace = await materializeWorkspace(task, { seed: parseSeed(options.seed), workspaceDir });
  if (options.json) return print(JSON.stringify(workspace, null, 2));
  print(
    `${workspace.workspaceDir}: ${workspace.files.length} files for ${task.manifest.id}, seed ${workspace.seed}`,
  );
  for (const asset of workspace.protectedAssets) print(`protected ${asset.path} sha256 ${asset.sha256}`);
}

export async function tasksGradeAction(
  taskDir: string,
  workspaceDir: string,
  options: { seed: string; json?: boolean; rerun: boolean; sandbox: boolean },
): Promise<void> {
  const task = await loadTask(taskDir);
  const mode = options.sandbox ? 'bubblewrap' : 'unsandboxed';
  const grade = await gradeWorkspace(task, {
    workspaceDir,
    seed: parseSeed(options.seed),
    ...(options.rerun ? { rerun: { runner: sandboxedEntryPointRunner({ mode }) } } : {}),
  });
  print(options.json ? JSON.stringify(grade, null, 2) : describeGrade(grade));
}

export async function tasksImportOfficialAction(
  checkout: string,
  options: { out: string; json?: boolean },
): Promise<void> {
  const { importOfficialTasks } = await import('../../tasks/official/import-official.js');
  const imported = await importOfficialTasks(checkout, options.out);
  if (options.json) return print(JSON.stringify(imported, null, 2));
  print(describeImport(imported));
}

export async function tasksSchemaAction(options: { write?: string }): Promise<void> {
  const schema = taskManifestJsonSchema();
  if (!options.write) return print(schema);
  await writeFile(options.write, schema);
  print(`wrote ${options.write}`);
}

function describeTask(task: LoadedTask): string {
  const { manifest } = task;
  const lines = [
    `${manifest.id}: ${manifest.title}`,
    `domain ${manifest.domain}, split ${manifest.split}`,
    `folder ${task.dir}`,
    '',
    'Deliverables:',
    ...manifest.deliverables.map((deliverable) => `  ${deliverable.path} (${deliverable.kind})`),
    '',
    'Inputs:',
    ...manifest.inputs.files.map((file) => `  ${file.from} -> ${file.to}`),
  ];
  const generator = manifest.inputs.generator;
  if (generator) lines.push(`  generator ${generator.script} -> ${generator.outputDir}/ (per seed)`);
  if (manifest.protected.length > 0) lines.push('', `Protected: ${manifest.protected.join(', ')}`);
  lines.push(
    '',
    manifest.oracle
      ? `Grader: ${manifest.oracle.grader}`
      : 'Grader: none (no oracle in task.yaml): the evaluation measures this task by the external judges alone',
  );
  const { network } = manifest.environment;
  lines.push(
    network === false
      ? 'Network: none (only the model)'
      : `Network: ${network.allow.join(', ')} (through the egress proxy, every request logged)`,
  );
  if (task.teacherDirective !== null) lines.push("Teacher directive: the suite's own (suite.yaml)");
  lines.push('', `Judge: ${task.judge.persona}`, `Lens: ${task.judge.lens}`);
  if (task.judge.focus) lines.push(`Focus: ${task.judge.focus}`);
  lines.push('', 'Initial workflow:');
  const initial = manifest.workflow;
  if (isFreeTextDesign(initial)) {
    lines.push(
      '  free text, given to the orchestrator as written:',
      ...initial.text
        .trimEnd()
        .split('\n')
        .map((line) => `    ${line}`),
    );
  } else {
    for (const agent of initial.agents) lines.push(`  ${agent.id} (${agent.kind}): ${agent.role}`);
    for (const hop of initial.hops) {
      lines.push(`  ${hop.from} -> ${hop.to}${hop.condition ? ` if ${hop.condition}` : ''}`);
    }
    for (const gap of draftGaps(initial)) lines.push(`  not specified yet: ${gap}`);
  }
  lines.push(
    '',
    `Withheld (never shown to any role): ${task.withheldDirs.map((dir) => path.relative(process.cwd(), dir)).join(', ')}`,
  );
  return lines.join('\n');
}

/** Relative to the working directory when it lies inside it, absolute otherwise. */
function shownPath(dir: string): string {
  const relative = path.relative(process.cwd(), dir);
  return relative === '' ? '.' : relative.startsWith('..') ? dir : relative;
}

function describeImport(imported: OfficialImport): string {
  const train = imported.tasks.filter((task) => task.split === 'train');
  const lines = [
    `${imported.suiteDir}: ${imported.tasks.length} tasks (${train.length} train, ${imported.tasks.length - train.length} test), no graders` +
      (imported.teacherDirective ? ', with the official teacher directive' : ''),
  ];
  const width = Math.max(...imported.tasks.map((task) => task.id.length));
  for (const task of imported.tasks) {
    const notes = [
      task.split === 'train' && !task.sft ? 'not in the official post-training set' : '',
      task.excludedFromCollection ? `excluded from teacher collection: ${task.excludedFromCollection}` : '',
    ].filter(Boolean);
    lines.push(
      `${task.id.padEnd(width)}  ${task.domain.padEnd(9)} ${task.split.padEnd(5)}  ${task.deliverables} deliverables; network: ${task.hosts.join(', ') || 'none'}`,
      ...notes.map((note) => `${' '.repeat(width)}  ${note}`),
      ...task.hostsLeftOut.map(
        (host) => `${' '.repeat(width)}  left out of the network: ${host.entry} (${host.why})`,
      ),
      ...(task.warning ? [`${' '.repeat(width)}  warning: ${task.warning}`] : []),
    );
  }
  lines.push(
    '',
    'Review each task.yaml (environment.network.allow lists the hosts each task names), then:',
    `  mass tasks validate ${shownPath(imported.suiteDir)}`,
  );
  return lines.join('\n');
}

function describeGrade(grade: Grade): string {
  const width = Math.max(...grade.parts.map((part) => part.name.length));
  const lines = [`${grade.task} (seed ${grade.seed}): ${grade.score.toFixed(1)} / 100`];
  for (const part of grade.parts) {
    const points = (part.score * 100).toFixed(0).padStart(3);
    lines.push(`  ${part.name.padEnd(width)} ${points} %  weight ${part.weight.toFixed(2)}  ${part.reason}`);
  }
  for (const cap of grade.capsApplied) lines.push(`  capped at ${cap.cap} because ${cap.part} failed`);
  for (const entry of grade.leftOut ?? [])
    lines.push(`  not graded: ${JSON.stringify(entry.path)}: ${entry.reason}`);
  return lines.join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

/** Runs a task's generator twice with the same seed and compares every written file byte for byte. */
async function checkGeneratorDeterminism(
  task: LoadedTask,
  seed: number,
): Promise<{ same: boolean; files: number; seconds: number }> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'mass-determinism-'));
  try {
    const digests: string[] = [];
    let files = 0;
    const started = Date.now();
    for (const run of ['first', 'second']) {
      const workspaceDir = path.join(scratch, run);
      await materializeWorkspace(task, { seed, workspaceDir });
      const listed = await listFiles(workspaceDir);
      files = listed.length;
      const hash = createHash('sha256');
      for (const file of listed) hash.update(file).update(await readFile(path.join(workspaceDir, file)));
      digests.push(hash.digest('hex'));
    }
    return { same: digests[0] === digests[1], files, seconds: (Date.now() - started) / 2000 };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
