import { UserError } from '../errors.js';
import { seededRandom } from '../ranking/seeded-random.js';

/** What the sampler needs of a window. */
export interface SampleableWindow {
  task: string;
  role: 'orchestrator' | 'subagent' | 'auxiliary';
  supervisedTokens: number;
}

export interface SamplerOptions {
  /** Training steps. */
  steps: number;
  /** Windows per step (micro-batch times gradient accumulation). */
  batchSize: number;
  seed: number;
  /** Chance of drawing from the task's orchestrator windows rather than its other windows (default 1/3). */
  orchestratorProbability?: number;
}

export interface SamplePlan {
  /** Window indices, `batchSize` per step, step after step. */
  draws: Int32Array;
  /** Supervised tokens of every window once: what the data holds. */
  storedSupervisedTokens: number;
  /** The expected supervised tokens the training processes: draws times the mean of one draw, exactly. */
  expectedProcessedSupervisedTokens: number;
  /** The supervised tokens of the windows this seed draws. */
  processedSupervisedTokens: number;
  /** The probability of each window on one draw. */
  probabilities: Float64Array;
}

export const DEFAULT_ORCHESTRATOR_PROBABILITY = 1 / 3;

interface TaskPools {
  orchestrator: number[];
  others: number[];
  /** Chance of the orchestrator pool for this task: the option, or 0 or 1 when one pool is empty. */
  orchestratorChance: number;
}

/**
 * The training sampler of MASS: a task uniformly, then the task's orchestrator windows with the given probability
 * (else its subagent and auxiliary windows), then a window of that pool uniformly; with replacement. A task with
 * only one kind of window always draws that kind.
 */
export function samplerPools(
  windows: readonly SampleableWindow[],
  orchestratorProbability = DEFAULT_ORCHESTRATOR_PROBABILITY,
): TaskPools[] {
  if (!(orchestratorProbability >= 0 && orchestratorProbability <= 1)) {
    throw new UserError(`orchestrator probability ${orchestratorProbability}: use a number from 0 to 1`);
  }
  const byTask = new Map<string, { orchestrator: number[]; others: number[] }>();
  for (const [index, window] of windows.entries()) {
    let pools = byTask.get(window.task);
    if (!pools) byTask.set(window.task, (pools = { orchestrator: [], others: [] }));
    (window.role === 'orchestrator' ? pools.orchestrator : pools.others).push(index);
  }
  return [...byTask.keys()].sort().map((task) => {
    const pools = byTask.get(task)!;
    const orchestratorChance =
      pools.others.length === 0 ? 1 : pools.orchestrator.length === 0 ? 0 : orchestratorProbability;
    return { ...pools, orchestratorChance };
  });
}

/** Each window's probability of being drawn once. */
export function drawProbabilities(
  windows: readonly SampleableWindow[],
  orchestratorProbability = DEFAULT_ORCHESTRATOR_PROBABILITY,
): Float64Array {
  const pools = samplerPools(windows, orchestratorProbability);
  const probabilities = new Float64Array(windows.length);
  for (const task of pools) {
    const share = 1 / pools.length;
    for (const index of task.orchestrator) {
      probabilities[index] = (share * task.orchestratorChance) / task.orchestrator.length;
    }
    for (const index of task.others) {
      probabilities[index] = (share * (1 - task.orchestratorChance)) / task.others.length;
    }
  }
  return probabilities;
}

/** Draws the windows for `steps × batchSize` samples from the seed, and counts the supervised tokens processed. */
export function sampleWindows(windows: readonly SampleableWindow[], options: SamplerOptions): SamplePlan {
  const { steps, batchSize, seed } = options;
  for (const [name, value] of [
    ['steps', steps],
    ['batch size', batchSize],
  ] as const) {
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new UserError(`${name} ${value}: use a positive whole number`);
  }
  if (windows.length === 0) throw new UserError('there are no windows to sample from');
  const orchestratorProbability = options.orchestratorProbability ?? DEFAULT_ORCHESTRATOR_PROBABILITY;
  const pools = samplerPools(windows, orchestratorProbability);
  const probabilities = drawProbabilities(windows, orchestratorProbability);
  const random = seededRandom(seed);
  const draws = new Int32Array(steps * batchSize);
  let processed = 0;
  for (let draw = 0; draw < draws.length; draw++) {
    const task = pools[Math.floor(random() * pools.length)]!;
    const pool = random() < task.orchestratorChance ? task.orchestrator : task.others;
    const index = pool[Math.floor(random() * pool.length)]!;
    draws[draw] = index;
    processed += windows[index]!.supervisedTokens;
  }
  let perDraw = 0;
  let stored = 0;
  for (const [index, window] of windows.entries()) {
    perDraw += probabilities[index]! * window.supervisedTokens;
    stored += window.supervisedTokens;
  }
  return {
    draws,
    storedSupervisedTokens: stored,
    expectedProcessedSupervisedTokens: perDraw * draws.length,
    processedSupervisedTokens: processed,
    probabilities,
  };
}
