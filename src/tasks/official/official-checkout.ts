import path from 'node:path';

import { z } from 'zod';

import { UserError } from '../../errors.js';
import { MissingCheckoutFile, readCheckoutFile, taskFilePath, type CheckoutFile } from './checkout-file.js';

/**
 * The task files of a checkout of the official MASS repository, as its `tasks/splits.json` describes them: the bare
 * query and the initial team of every task, the post-training split, the domains, and the teacher directive. Read
 * from the user's own checkout; nothing of it is part of this project.
 */

const TaskNumber = z.number().int().nonnegative();

export const OfficialSplits = z
  .object({
    designated_train: z.array(TaskNumber).min(1),
    test: z.array(TaskNumber),
    sft_train: z.array(TaskNumber).optional(),
    excluded_from_teacher_collection: z.record(z.string(), z.string()).optional(),
    domains: z.record(z.string().min(1), z.array(TaskNumber)),
    task_prompt_pattern: z.string().includes('{task_id}').default('bare/query{task_id}.txt'),
    initial_workflow_pattern: z.string().includes('{task_id}').default('initial/query{task_id}_ourTeam.txt'),
  })
  // Fields added by later versions of the official repository are ignored rather than refused.
  .passthrough();
export type OfficialSplits = z.infer<typeof OfficialSplits>;

export interface OfficialTask {
  number: number;
  domain: string;
  split: 'train' | 'test';
  /** Among the tasks the official post-training uses (`sft_train`); every train task when the file has no such list. */
  sft: boolean;
  /** Why the official run left it out of teacher collection, when it did. */
  excludedFromCollection: string | null;
  /** The bare query, exactly as the file holds it. */
  bare: string;
  /** The initial team file: the task text, then the team. */
  initial: string;
  /** The two files, relative to the checkout, for the record. */
  files: { bare: string; initial: string };
  /** Their permission bits, the more private of the two: what is made of them is no more readable. */
  mode: number;
}

export interface OfficialCheckout {
  dir: string;
  splits: OfficialSplits;
  tasks: OfficialTask[];
  /** The teacher directive as the file holds it, with its permission bits; null when the checkout has none. */
  teacherDirective: { text: string; mode: number } | null;
}

const TASKS_DIR = 'tasks';
const SPLITS_FILE = 'splits.json';
const TEACHER_DIRECTIVE_FILE = 'teacher_directive.txt';

/** Reads and checks a checkout; every problem names the file and what to do. */
export async function readOfficialCheckout(checkoutDir: string): Promise<OfficialCheckout> {
  const dir = path.resolve(checkoutDir);
  const splitsFile = `${TASKS_DIR}/${SPLITS_FILE}`;
  const splits = parseSplits(
    splitsFile,
    (await readCheckoutFile(dir, splitsFile, 'the official tasks list')).text,
  );

  const test = new Set(splits.test);
  const numbers = [...new Set([...splits.designated_train, ...splits.test])].sort((a, b) => a - b);
  const both = splits.designated_train.filter((number) => test.has(number));
  if (both.length > 0) {
    throw new UserError(
      `${splitsFile}: task ${both.join(', ')} is listed both in "designated_train" and in "test"; a task belongs to one split`,
    );
  }
  const domainOf = new Map<number, string>();
  for (const [domain, members] of Object.entries(splits.domains)) {
    for (const number of members) domainOf.set(number, domain);
  }
  const sft = new Set(splits.sft_train ?? splits.designated_train);
  const tasks: OfficialTask[] = [];
  for (const number of numbers) {
    const domain = domainOf.get(number);
    if (!domain) {
      throw new UserError(
        `${splitsFile}: task ${number} is in no list of "domains"; add it to its domain's list`,
      );
    }
    const id = String(number);
    const bare = await readCheckoutFile(
      dir,
      taskFilePath(splits.task_prompt_pattern, id, 'task_prompt_pattern'),
      `task ${number}'s bare query`,
    );
    const initial = await readCheckoutFile(
      dir,
      taskFilePath(splits.initial_workflow_pattern, id, 'initial_workflow_pattern'),
      `task ${number}'s initial team`,
    );
    for (const file of [bare, initial]) {
      if (file.text.trim() === '') throw new UserError(`${path.join(dir, file.relative)}: the file is empty`);
    }
    tasks.push({
      number,
      domain,
      split: test.has(number) ? 'test' : 'train',
      sft: !test.has(number) && sft.has(number),
      excludedFromCollection: splits.excluded_from_teacher_collection?.[String(number)] ?? null,
      bare: bare.text,
      initial: initial.text,
      files: { bare: bare.relative, initial: initial.relative },
      mode: privateMode(bare, initial),
    });
  }
  const directive = await readCheckoutFile(
    dir,
    `${TASKS_DIR}/${TEACHER_DIRECTIVE_FILE}`,
    'the teacher directive',
  ).catch((error: unknown) => {
    if (error instanceof MissingCheckoutFile) return null;
    throw error;
  });
  const teacherDirective = directive && { text: directive.text, mode: privateMode(directive) };
  return { dir, splits, tasks, teacherDirective };
}

/** 644 when every source may be read by anyone, 600 otherwise. */
function privateMode(...sources: CheckoutFile[]): number {
  return sources.every((source) => (source.mode & 0o044) === 0o044) ? 0o644 : 0o600;
}

function parseSplits(file: string, text: string): OfficialSplits {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UserError(`${file}: not valid JSON (${(error as Error).message})`);
  }
  const parsed = OfficialSplits.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (issue) => `${file}: field "${issue.path.join('.') || '(top level)'}": ${issue.message}`,
    );
    throw new UserError(lines.join('\n'));
  }
  return parsed.data;
}
