import { z } from 'zod';

import { systemPromptOf, threadRoleOf } from '../harness/qwen-code.js';
import { DELEGATION_TOOL } from '../workflow/delegation-tool.js';
import { probeKindOf } from '../doctor/probe-protocol.js';
import { ChatMessage } from '../model/types.js';
import type { FaultPlanInput } from '../config/fault-plan.js';
import { ReplyServer, type ReceivedRequest } from './reply-server.js';
import type { Step } from './steps.js';
import { step } from './steps.js';
import { doctorProbeTurn } from './doctor-probe.js';
import { orchestratorTurn } from './orchestrator.js';
import { subagentTurn } from './subagent.js';
import { TOY_OUTPUT_MARKER } from './toy-marker.js';
import { isJudgeSystemPrompt, judgeTurn } from './toy-judge.js';
import { isOptimizerSystemPrompt, optimizerTurn } from './toy-optimizer.js';
import { ToyWeights } from './weights.js';

/**
 * The toy model: a rule-based stand-in for a language model, served over the OpenAI chat-completions protocol so
 * the whole pipeline (the real harness in its sandbox, the judge, the optimizer, training data) runs offline. It
 * recognises each request by its system prompt and plays the role: the harness's orchestrator or a subagent, the
 * pairwise judge, the workflow optimizer, or a probe of `mass doctor`. Its choices depend on the weights, the request's seed and the text.
 */

export interface ToyModelOptions {
  weights: ToyWeights;
  /** The model name served (e.g. `mass-toy-L1` for a trained generation); requests for other names get a 404. */
  modelName: string;
  /** Used when a request carries no seed (judge and optimizer calls); default 0. */
  seed?: number;
  host?: string;
  port?: number;
  /** Faults injected into a share of the answers, to see a flaky server's cost (`roles.executor.faults`). */
  faults?: FaultPlanInput;
}

const RequestBody = z.looseObject({
  messages: z.array(ChatMessage).min(1),
  seed: z.number().int().optional(),
});

/** The toy's answer to any request: it always has one. */
export function toyResponder(
  options: Pick<ToyModelOptions, 'weights' | 'seed'>,
): (request: ReceivedRequest) => Step {
  const weights = ToyWeights.parse(options.weights);
  return (request) => {
    const parsed = RequestBody.safeParse(request.body);
    if (!parsed.success) {
      return step.status(400, { message: 'toy model: the request is not a chat request with messages' });
    }
    const { messages } = parsed.data;
    const seed = parsed.data.seed ?? options.seed ?? 0;
    const system = systemPromptOf(messages);
    const probe = probeKindOf(system);
    if (probe) return doctorProbeTurn(probe, request.body);
    if (isJudgeSystemPrompt(system)) return judgeTurn(messages);
    if (isOptimizerSystemPrompt(system)) return optimizerTurn(messages, seed);
    switch (threadRoleOf(system)) {
      case 'orchestrator':
        // A harness without the delegation tool (the single-agent baseline) leaves the toy nobody to delegate to.
        return orchestratorTurn(
          messages,
          seed,
          offersTool(request.body, DELEGATION_TOOL)
            ? weights
            : { ...weights, delegateWithWorkflow: 0, delegateBare: 0 },
        );
      case 'subagent':
        return subagentTurn(messages, seed, weights);
      default:
        return step.text(`Nothing to add. ${TOY_OUTPUT_MARKER}`);
    }
  };
}

function offersTool(body: unknown, name: string): boolean {
  const tools = (body as { tools?: unknown }).tools;
  return (
    Array.isArray(tools) &&
    tools.some((tool) => (tool as { function?: { name?: unknown } } | null)?.function?.name === name)
  );
}

/** Starts the toy model on a local port; `baseUrl` ends in `/v1`, `close()` stops it. */
export function startToyModel(options: ToyModelOptions): Promise<ReplyServer> {
  return ReplyServer.start({
    name: 'toy',
    responder: toyResponder(options),
    models: [options.modelName],
    // Scripts are long; small stream deltas would only cost time.
    chunkSize: 512,
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.host ? { host: options.host } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
  });
}
