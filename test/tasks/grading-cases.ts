import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { sandboxedEntryPointRunner } from '../../src/episode/entry-point-sandbox.js';
import { gradeWorkspaces, materializeWorkspace, type Grade, type LoadedTask } from '../../src/tasks/index.js';
import { loadResearchTask, runReferenceSolutions, scratchDir } from './support.js';

export interface GradingCase {
  taskId: string;
  seed: number;
  /** The result file most parts depend on; deleting it is the "missing deliverable" flaw. */
  mainResult: string;
  /** Where to plant invalid numbers: a JSON file (every number becomes NaN) or a CSV column (every cell `nan`). */
  invalidNumbers?: { file: string; column?: string };
  /** For tasks with a protected simulator: an edit that makes the simulator "easier", as a reward hacker would. */
  protectedEdit?: { file: string; find: string; replace: string };
  /** The task's graded traps: one variant each, `run.py --trap <name>` on the careful run's data. */
  traps?: string[];
}

export type Variant =
  | 'reference'
  | 'careless'
  | 'missing'
  | 'invalid-numbers'
  | 'empty'
  | 'junk'
  | 'protected-edit'
  | 'reference-rerun'
  | `trap-${string}`;

export interface GradedVariants {
  grades: Partial<Record<Variant, Grade>>;
  /** Scratch folder holding every variant's workspace; remove when done. */
  root: string;
}

/**
 * Builds one task's workspaces and grades them: the reference solution, a careless solution that falls into the
 * task's traps, one solution per listed trap (and then the reference again, its run.py rerun), the reference without its main result, with NaN results, with (where relevant) an edited protected
 * simulator, and two garbage workspaces (empty, junk). All graded in one grader process.
 */
export async function gradeVariants(testCase: GradingCase): Promise<GradedVariants> {
  const { taskId, seed } = testCase;
  const root = await scratchDir(taskId);
  const task = await loadResearchTask(taskId);
  const pristine = path.join(root, 'pristine');
  await materializeWorkspace(task, { seed, workspaceDir: pristine });
  const workspace = (variant: Variant) => path.join(root, variant);
  const traps = (testCase.traps ?? []).map((trap) => ({ trap, variant: `trap-${trap}` as const }));
  const copies: Variant[] = ['reference', 'careless', 'empty', 'junk', ...traps.map((t) => t.variant)];
  for (const variant of copies) await cp(pristine, workspace(variant), { recursive: true });
  // The careful run first: it is the one the rerun below reproduces, in a Python as fresh as a rerun's.
  await runReferenceSolutions(taskId, [
    { workspaceDir: workspace('reference'), flaw: 'careful' },
    { workspaceDir: workspace('careless'), flaw: 'careless' },
    ...traps.map(({ trap, variant }) => ({ workspaceDir: workspace(variant), flaw: { trap } })),
  ]);

  await cp(workspace('reference'), workspace('missing'), { recursive: true });
  await rm(path.join(workspace('missing'), testCase.mainResult));
  await cp(workspace('reference'), workspace('invalid-numbers'), { recursive: true });
  await plantInvalidNumbers(
    workspace('invalid-numbers'),
    testCase.invalidNumbers ?? { file: 'results/metrics.json' },
  );
  await writeJunk(task, workspace('junk'));
  const variants: Variant[] = ['reference', 'careless', 'missing', 'invalid-numbers', 'empty', 'junk'];
  variants.push(...traps.map((t) => t.variant));
  if (testCase.protectedEdit) {
    const { file, find, replace } = testCase.protectedEdit;
    await cp(workspace('reference'), workspace('protected-edit'), { recursive: true });
    const target = path.join(workspace('protected-edit'), file);
    const source = await readFile(target, 'utf8');
    if (!source.includes(find))
      throw new Error(`${file} of ${taskId} no longer contains ${JSON.stringify(find)}`);
    await writeFile(target, source.replace(find, replace));
    variants.push('protected-edit');
  }
  const graded = await gradeWorkspaces(task, { workspaceDirs: variants.map(workspace), seed });
  const grades: Partial<Record<Variant, Grade>> = {};
  variants.forEach((variant, index) => (grades[variant] = graded[index]));
  if (traps.length > 0) {
    // The careful reference as an episode's grading sees it: run.py rerun in a fresh sandboxed copy. The variants
    // above are graded without a rerun (every reproducibility part 0 alike), so a trap's cost compares like with like.
    const runner = sandboxedEntryPointRunner({ mode: 'bubblewrap' });
    const [rerun] = await gradeWorkspaces(task, {
      workspaceDirs: [workspace('reference')],
      seed,
      rerun: { runner },
    });
    grades['reference-rerun'] = rerun;
  }
  return { grades, root };
}

/** A readable one-line account of a grade, for assertion messages. */
export function explain(grade: Grade): string {
  return `${grade.task} scored ${grade.score}: ${grade.parts.map((part) => `${part.name}=${part.score} (${part.reason})`).join('; ')}`;
}

async function plantInvalidNumbers(
  workspaceDir: string,
  target: { file: string; column?: string },
): Promise<void> {
  const file = path.join(workspaceDir, target.file);
  const text = await readFile(file, 'utf8');
  if (target.column) {
    const [header, ...rows] = text.trimEnd().split('\n');
    const index = header!.split(',').indexOf(target.column);
    if (index < 0) throw new Error(`${target.file} has no column ${target.column}`);
    const broken = rows.map((row) =>
      row
        .split(',')
        .map((cell, i) => (i === index ? 'nan' : cell))
        .join(','),
    );
    await writeFile(file, `${[header, ...broken].join('\n')}\n`);
    return;
  }
  // What Python's json.dump writes for float('nan') by default: every number in the file becomes NaN.
  const nanified = JSON.stringify(JSON.parse(text), (_key, value: unknown) =>
    typeof value === 'number' ? '__NAN__' : value,
  ).replaceAll('"__NAN__"', 'NaN');
  await writeFile(file, nanified);
}

/** Every deliverable path present but holding the wrong thing: truncated JSON, text instead of PNG, wrong columns. */
async function writeJunk(task: LoadedTask, workspaceDir: string): Promise<void> {
  for (const deliverable of task.manifest.deliverables) {
    const file = path.join(workspaceDir, deliverable.path);
    await mkdir(path.dirname(file), { recursive: true });
    const junk: Record<string, string> = {
      report: '# TODO\n',
      'metrics-json': '{"score": 1, "status": ',
      'ablation-json': '[]',
      json: '{"unexpected": [1, 2, "three"]}',
      csv: 'a,b\n1,2\n',
      plot: 'this is not a picture',
      'entry-point': 'def broken(:\n',
    };
    await writeFile(file, junk[deliverable.kind] ?? 'junk');
  }
}
