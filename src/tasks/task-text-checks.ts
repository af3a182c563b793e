import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { reviewLoopProblems } from '../workflow/review-loops.js';
import { visualCheckPhrases } from '../workflow/visual-checks.js';
import { isFreeTextDesign, type WorkflowAgent } from '../workflow/workflow.js';
import type { LoadedTask } from './load-task.js';
import { renderTaskPrompt } from './render-prompt.js';

/**
 * What `mass tasks validate` checks of a task's texts beyond their schema, without running anything:
 *
 * - every file and field the grader declares it reads (`oracle.graded` in task.yaml) is named, as a whole word, in the
 *   prompt as the team sees it (prompt.md with the deliverables appended) or in a Markdown input (the data README);
 *   and every workspace path the grader's source names as a string literal (`"results/potency.csv"`) is declared;
 * - the v0 design has no review loop it cannot finish (`workflow/review-loops.ts`);
 * - where the served model takes no images, neither the design nor the task's texts ask for a visual check
 *   (`workflow/visual-checks.ts`).
 *
 * Each problem names the task and where to fix it.
 */
interface TaskTextCheckOptions {
  /** The served model takes image input: visual checks are possible, and not flagged. */
  images: boolean;
}

interface NamedText {
  name: string;
  text: string;
}

export async function taskTextProblems(task: LoadedTask, options: TaskTextCheckOptions): Promise<string[]> {
  const id = task.manifest.id;
  const readmes = await markdownInputs(task);
  const problems = [
    ...(await undeclaredReads(task)),
    ...gradedFieldProblems(task, [{ name: 'the prompt', text: renderTaskPrompt(task) }, ...readmes]),
  ];
  const workflow = task.manifest.workflow;
  if (!isFreeTextDesign(workflow)) {
    const reportPaths = task.manifest.deliverables
      .filter((deliverable) => deliverable.kind === 'report')
      .map((deliverable) => deliverable.path);
    for (const problem of reviewLoopProblems(workflow, { reportPaths })) {
      problems.push(`${id}: task.yaml workflow hop ${problem.hop + 1}, ${problem.message}`);
    }
  }
  if (!options.images) {
    const texts: NamedText[] = [
      ...(task.harbor ? [] : [{ name: promptName(task), text: task.prompt }]),
      ...readmes,
      ...(isFreeTextDesign(workflow)
        ? [{ name: 'the workflow text', text: workflow.text }]
        : workflow.agents.map((agent) => ({ name: `workflow agent ${agent.id}`, text: agentText(agent) }))),
    ];
    for (const { name, text } of texts) {
      for (const phrase of visualCheckPhrases(text)) {
        problems.push(
          `${id}: ${name} asks for a visual check ("${phrase}"), but the model takes no images: ask for a check on numbers instead (or validate with --images when the served model reads images)`,
        );
      }
    }
  }
  return problems;
}

function gradedFieldProblems(task: LoadedTask, texts: NamedText[]): string[] {
  const graded = task.manifest.oracle?.graded ?? {};
  const names = texts.map((text) => text.name);
  const where = names.length === 1 ? `${names[0]} does not name` : `neither ${names.join(' nor ')} names`;
  const named = (word: string) => texts.some(({ text }) => wholeWord(word).test(text));
  const problems: string[] = [];
  for (const [file, fields] of Object.entries(graded)) {
    if (!named(file)) {
      problems.push(`${task.manifest.id}: the grader reads ${file} (oracle.graded), which ${where}`);
    }
    for (const field of fields.filter((name) => !named(name))) {
      problems.push(
        `${task.manifest.id}: the grader reads ${file} field "${field}" (oracle.graded), which ${where}: say what it holds where the team reads the task`,
      );
    }
  }
  return problems;
}

/** A workspace path the grader's source names as a literal: `"results/potency.csv"`. */
const GRADER_PATH_LITERAL = /["']((?:[\w-]+\/)+[\w.-]+\.(?:json|csv|txt|md|png))["']/g;

/** Workspace paths the grader's source names that `oracle.graded` does not declare (read statically, never run). */
async function undeclaredReads(task: LoadedTask): Promise<string[]> {
  const oracle = task.manifest.oracle;
  if (!oracle) return [];
  let source: string;
  try {
    source = await readFile(path.join(task.dir, oracle.grader), 'utf8');
  } catch {
    return []; // a missing grader is the manifest's problem, reported by loadTask
  }
  const declared = new Set(Object.keys(oracle.graded));
  const named = new Set([...source.matchAll(GRADER_PATH_LITERAL)].map((match) => match[1]!));
  return [...named]
    .filter((file) => !declared.has(file))
    .map(
      (file) =>
        `${task.manifest.id}: ${oracle.grader} reads ${file}, which oracle.graded does not declare: list it with the fields the grader checks`,
    );
}

/** The Markdown inputs the team reads beside the prompt (the data README), named by their workspace path. */
async function markdownInputs(task: LoadedTask): Promise<NamedText[]> {
  const files = task.manifest.inputs.files.filter((file) => file.to.toLowerCase().endsWith('.md'));
  return Promise.all(
    files.map(async (file) => ({
      name: file.to,
      text: await readFile(path.join(task.dir, file.from), 'utf8'),
    })),
  );
}

/** Where the task's own text is: its prompt file, or task.yaml when the text is inline. */
function promptName(task: LoadedTask): string {
  const { prompt } = task.manifest;
  return typeof prompt === 'string' ? 'the prompt in task.yaml' : prompt.file;
}

function agentText(agent: WorkflowAgent): string {
  const contract = agent.contract;
  return [
    agent.role,
    agent.instruction,
    ...(contract?.fields ?? []).flatMap((field) => [
      field.description,
      ...(field.fields ?? []).map((nested) => nested.description),
    ]),
    ...(contract?.checks ?? []).map((check) => check.description),
  ].join('\n');
}

function wholeWord(word: string): RegExp {
  return new RegExp(`(?<![\\w])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w])`);
}
