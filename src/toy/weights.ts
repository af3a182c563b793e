import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { UserError } from '../errors.js';

/**
 * The toy model's "weights": the probabilities of the behaviours it chooses between. They are what the toy trainer
 * changes from one generation to the next, so a trained generation behaves measurably differently.
 */

export const TOY_WEIGHTS_SCHEMA_VERSION = 1;

const Probability = z.number().min(0).max(1);

export const ToyWeights = z
  .object({
    schemaVersion: z.literal(TOY_WEIGHTS_SCHEMA_VERSION),
    /** 0 for the base model; the toy trainer adds one. */
    generation: z.number().int().nonnegative(),
    /** The orchestrator, given a workflow, delegates to its subagents (otherwise it does the work alone). */
    delegateWithWorkflow: Probability,
    /** The orchestrator, given the bare task, forms a team of its own (an analyst and a reporter) and delegates. */
    delegateBare: Probability,
    /** A subagent runs each check its contract asks for (otherwise it reports the check as "not run"). */
    runChecks: Probability,
    /** A report has every section asked and enough words (otherwise a brief one that misses sections). */
    completeReport: Probability,
    /** A first attempt at the results writes every required key (otherwise it forgets one: a slip checks can catch). */
    careful: Probability,
  })
  .strict();
export type ToyWeights = z.infer<typeof ToyWeights>;

/** The base model, generation 0: follows a workflow mostly, rarely organises a team on its own, checks half the time. */
export const BASE_TOY_WEIGHTS: Readonly<ToyWeights> = Object.freeze({
  schemaVersion: TOY_WEIGHTS_SCHEMA_VERSION,
  generation: 0,
  delegateWithWorkflow: 0.85,
  delegateBare: 0.05,
  runChecks: 0.5,
  completeReport: 0.6,
  careful: 0.7,
});

/** The behaviour names, in the schema's order. */
export const TOY_BEHAVIOURS = [
  'delegateWithWorkflow',
  'delegateBare',
  'runChecks',
  'completeReport',
  'careful',
] as const;
export type ToyBehaviour = (typeof TOY_BEHAVIOURS)[number];

export async function loadToyWeights(file: string): Promise<ToyWeights> {
  const text = await readFile(file, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UserError(`${file}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const parsed = ToyWeights.safeParse(value);
  if (!parsed.success) throw new UserError(`${file}: not toy weights: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** Writes the weights atomically (a temporary file renamed into place). */
export async function saveToyWeights(file: string, weights: ToyWeights): Promise<void> {
  const valid = ToyWeights.parse(weights);
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(valid, null, 2)}\n`);
  await rename(temporary, file);
}
