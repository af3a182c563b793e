import { readFile } from 'node:fs/promises';

import { z } from 'zod';

import { SystemError, UserError } from '../errors.js';
import {
  parseJson,
  requestServer,
  serverMessage,
  serverRoot,
  type InferenceServer,
} from './inference-server.js';

/**
 * The deployment check: after a generation is put on the server, and before any episode runs on it, the server is
 * asked for the log-probability of every token of a fixed probe (vLLM's `prompt_logprobs` on `/v1/completions`),
 * and its answer is compared with what the trainer computed on the weights it just produced (`probe.json`) and on
 * their parent. A server that answers as the parent, as something else, or not at all stops the run: a deployment
 * that "succeeded" but serves the old weights would otherwise make the round look as if it happened.
 */
/** The probe's file beside the trainer's weights (python/deployment_probe.py), and in an FP8 export. */
export const PROBE_FILE = 'probe.json';

export const DeploymentProbe = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('deployment-probe'),
  tokens: z.array(z.number().int().nonnegative()).min(2),
  parent: z.array(z.number()),
  trained: z.array(z.number()),
  trainedWeights: z.string(),
  maxGenerationChange: z.number().nonnegative(),
});
export type DeploymentProbe = z.infer<typeof DeploymentProbe>;

/**
 * Mean |Δ log-probability| per probe token that serving may add. BF16: the server's kernels against the trainer's
 * forward; FP8: weights rounded to 3 mantissa bits and activations quantised on the fly.
 */
export const PROBE_TOLERANCE = { bf16: 0.05, fp8: 0.15 } as const;

export interface DeploymentCheck {
  servedAs: string;
  tokens: number;
  tolerance: number;
  /** Mean |server − trained| and the largest, over the probe's scored tokens. */
  meanDifferenceFromGeneration: number;
  maxDifferenceFromGeneration: number;
  /** Mean |server − parent|. */
  meanDifferenceFromParent: number;
  /** Mean |trained − parent|: how far training moved the probe, the resolution of the check. */
  generationChange: number;
  /** False when training moved the probe less than the tolerance: then the server cannot be told from the parent. */
  distinguishable: boolean;
}

export async function readDeploymentProbe(path: string): Promise<DeploymentProbe> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UserError(`the deployment check needs the trainer's probe ${path}, which cannot be read`, {
      cause: error,
    });
  }
  const parsed = DeploymentProbe.safeParse(parseJson(text));
  if (!parsed.success || !sameLength(parsed.data)) {
    throw new UserError(
      `${path} is not a deployment probe written by the trainer (kind deployment-probe, version 1)`,
    );
  }
  return parsed.data;
}

function sameLength(probe: DeploymentProbe): boolean {
  return probe.parent.length === probe.tokens.length - 1 && probe.trained.length === probe.tokens.length - 1;
}

const CompletionWithPromptLogprobs = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        prompt_logprobs: z.array(z.record(z.string(), z.looseObject({ logprob: z.number() })).nullable()),
      }),
    )
    .min(1),
});

/** The server's log-probability of each probe token after the first, as it serves `servedAs`. */
export async function servedTokenLogprobs(
  server: InferenceServer,
  servedAs: string,
  tokens: readonly number[],
  signal?: AbortSignal,
): Promise<number[]> {
  const reply = await requestServer(server, 'POST', '/v1/completions', {
    body: { model: servedAs, prompt: tokens, max_tokens: 1, temperature: 0, prompt_logprobs: 0 },
    signal,
  });
  if (reply.status !== 200) {
    const message = `POST ${reply.url} (the deployment check's probe) answered ${reply.status}: ${serverMessage(reply.text)}`;
    throw reply.status >= 500 ? new SystemError(message) : new UserError(message);
  }
  const parsed = CompletionWithPromptLogprobs.safeParse(parseJson(reply.text));
  const rows = parsed.success ? parsed.data.choices[0]!.prompt_logprobs : undefined;
  if (!rows || rows.length !== tokens.length) {
    throw new UserError(
      `${serverRoot(server.baseUrl)} gave no prompt log-probabilities for the probe (${reply.text.slice(0, 200)}): ` +
        'the deployment check needs vLLM (its `prompt_logprobs`), or turn the check off with rsi.deploy.check: false',
    );
  }
  return tokens.slice(1).map((token, index) => {
    const entry = rows[index + 1]?.[String(token)];
    if (entry === undefined) {
      throw new UserError(
        `${serverRoot(server.baseUrl)}'s prompt log-probabilities miss probe token ${token}`,
      );
    }
    return entry.logprob;
  });
}

/** The figures of one server's answer to the probe, and what it seems to serve when that is not the generation. */
export interface DeploymentComparison {
  check: DeploymentCheck;
  /** The figures in words. */
  figures: string;
  /** Null when the server answers as the generation; else the failure, naming what it seems to serve. */
  mismatch: string | null;
}

interface DeploymentCheckOptions {
  server: InferenceServer;
  servedAs: string;
  generation: string;
  parent: string;
  probe: DeploymentProbe;
  tolerance: number;
  signal?: AbortSignal;
}

/**
 * Asks the server for the probe and compares: the server answers as the generation when the mean difference is within
 * the tolerance and it is not closer to the parent. Throws only when the server gives no answer to compare.
 */
export async function compareDeployment(options: DeploymentCheckOptions): Promise<DeploymentComparison> {
  const { probe, tolerance } = options;
  const served = await servedTokenLogprobs(options.server, options.servedAs, probe.tokens, options.signal);
  const fromGeneration = differences(served, probe.trained);
  const check: DeploymentCheck = {
    servedAs: options.servedAs,
    tokens: probe.tokens.length,
    tolerance,
    meanDifferenceFromGeneration: mean(fromGeneration),
    maxDifferenceFromGeneration: Math.max(...fromGeneration),
    meanDifferenceFromParent: mean(differences(served, probe.parent)),
    generationChange: mean(differences(probe.trained, probe.parent)),
    distinguishable: mean(differences(probe.trained, probe.parent)) > tolerance,
  };
  const figures =
    `mean |Δ log-probability| per probe token ${format(check.meanDifferenceFromGeneration)} from ${options.generation}, ` +
    `${format(check.meanDifferenceFromParent)} from its parent ${options.parent} (tolerance ${tolerance}; training ` +
    `moved the probe by ${format(check.generationChange)})`;
  const matchesGeneration = check.meanDifferenceFromGeneration <= tolerance;
  const closerToParent =
    check.distinguishable && check.meanDifferenceFromParent < check.meanDifferenceFromGeneration;
  if (matchesGeneration && !closerToParent) return { check, figures, mismatch: null };
  const what =
    check.meanDifferenceFromParent <= tolerance
      ? `it answers as the parent ${options.parent}: the deployment did not take effect (a restart command that ` +
        'starts the old path, an adapter that failed to load, or a proxy in front of another server)'
      : `it answers as neither ${options.generation} nor its parent`;
  return {
    check,
    figures,
    mismatch: `the deployment check failed: ${serverRoot(options.server.baseUrl)} serves ${options.servedAs}, but ${what}; ${figures}`,
  };
}

/**
 * Asks the server for the probe and compares. Returns the figures when the server answers as the generation (mean
 * difference within the tolerance, and closer to it than to its parent); otherwise throws a `SystemError` that says
 * what the server seems to serve.
 */
export async function checkDeployment(options: DeploymentCheckOptions): Promise<DeploymentCheck> {
  const { check, mismatch } = await compareDeployment(options);
  if (mismatch !== null) throw new SystemError(mismatch);
  return check;
}

function differences(one: readonly number[], other: readonly number[]): number[] {
  return one.map((value, index) => Math.abs(value - other[index]!));
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function format(value: number): string {
  return value.toFixed(4);
}
