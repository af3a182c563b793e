import { DELEGATION_TOOL } from '../workflow/delegation-tool.js';
import type { ChatMessage } from '../model/types.js';
import { readScriptBehaviour } from './analysis-script.js';
import { TOY_BEHAVIOURS, ToyWeights, type ToyBehaviour } from './weights.js';

/**
 * The toy trainer: the stand-in for fine-tuning. It reads the behaviours in the supervised assistant turns of the
 * selected trajectories and moves each weight part of the way towards the rate observed there:
 *   weight ← weight + learningRate × (observed rate − weight)
 * A behaviour with no observation keeps its weight. What is observed, in the model's own outputs only:
 * - delegateBare and delegateWithWorkflow: the share of orchestrator conversations whose targets call the
 *   delegation tool (the training data shows the bare task, so both move together);
 * - runChecks: checks run among the checks the written scripts were asked for (`CHECKS_RUN`, `CHECKS_SKIPPED`);
 * - completeReport: scripts writing a report with `REPORT_COMPLETE = True`;
 * - careful: first-attempt scripts writing results without a forgotten key (`SLIP_OMITTED_KEY = None`).
 * Pure and deterministic: the same weights and conversations give the same new weights.
 */

/** The part of a training conversation the trainer reads (`TrainingConversation` from the data builder fits). */
export interface SupervisedConversation {
  role: string;
  messages: ChatMessage[];
  /** Indices of the assistant messages that are training targets. */
  targets: number[];
}

export interface ToyTrainingOptions {
  /** The share of the gap to the observed rate closed in one training round (default 0.5). */
  learningRate?: number;
}

export interface BehaviourObservation {
  /** Times the behaviour was shown. */
  shown: number;
  /** Times it could have been shown. */
  opportunities: number;
}

export type ToyObservations = Record<ToyBehaviour, BehaviourObservation>;

export function observeToyBehaviours(conversations: readonly SupervisedConversation[]): ToyObservations {
  const observations = Object.fromEntries(
    TOY_BEHAVIOURS.map((behaviour) => [behaviour, { shown: 0, opportunities: 0 }]),
  ) as ToyObservations;
  const count = (behaviour: ToyBehaviour, shown: number, opportunities = 1) => {
    observations[behaviour].shown += shown;
    observations[behaviour].opportunities += opportunities;
  };
  for (const conversation of conversations) {
    const targets = conversation.targets
      .map((index) => conversation.messages[index])
      .filter(
        (message): message is Extract<ChatMessage, { role: 'assistant' }> => message?.role === 'assistant',
      );
    if (targets.length === 0) continue;
    const calls = targets.flatMap((message) => message.tool_calls ?? []);
    if (conversation.role === 'orchestrator') {
      const delegated = calls.some((call) => call.function.name === DELEGATION_TOOL) ? 1 : 0;
      count('delegateBare', delegated);
      count('delegateWithWorkflow', delegated);
    }
    for (const call of calls) {
      if (call.function.name !== 'write_file') continue;
      const args = parseArguments(call.function.arguments);
      const behaviour = typeof args.content === 'string' ? readScriptBehaviour(args.content) : undefined;
      if (!behaviour) continue;
      const asked = behaviour.checksRun.length + behaviour.checksSkipped.length;
      if (asked > 0) count('runChecks', behaviour.checksRun.length, asked);
      if (behaviour.writesReport) count('completeReport', behaviour.reportComplete ? 1 : 0);
      const firstAttempt = !/_attempt\d+\.py$/.test(String(args.file_path ?? ''));
      if (behaviour.writesMetrics && firstAttempt)
        count('careful', behaviour.slipOmittedKey === null ? 1 : 0);
    }
  }
  return observations;
}

export function trainToyWeights(
  weights: ToyWeights,
  conversations: readonly SupervisedConversation[],
  options: ToyTrainingOptions = {},
): ToyWeights {
  const learningRate = options.learningRate ?? 0.5;
  if (!(learningRate > 0 && learningRate <= 1)) {
    throw new RangeError(`toy trainer: learningRate must be above 0 and at most 1, not ${learningRate}`);
  }
  const observations = observeToyBehaviours(conversations);
  const next: ToyWeights = { ...weights, generation: weights.generation + 1 };
  for (const behaviour of TOY_BEHAVIOURS) {
    const { shown, opportunities } = observations[behaviour];
    if (opportunities === 0) continue;
    const moved = weights[behaviour] + learningRate * (shown / opportunities - weights[behaviour]);
    next[behaviour] = Math.round(moved * 1e6) / 1e6;
  }
  return ToyWeights.parse(next);
}

function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
