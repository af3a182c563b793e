import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { beforeAll, describe, expect, it } from 'vitest';

import type { ChatMessage } from '../../src/model/types.js';
import { loadTask, renderTaskPrompt } from '../../src/tasks/index.js';
import type { ScriptedRequest } from '../../src/testing/scripted-server.js';
import type { Step } from '../../src/toy/steps.js';
import {
  BASE_TOY_WEIGHTS,
  loadToyWeights,
  observeToyBehaviours,
  saveToyWeights,
  toyResponder,
  trainToyWeights,
  type SupervisedConversation,
  type ToyWeights,
} from '../../src/toy/index.js';
import { temporaryDirectory } from '../support/fixtures.js';

const taskDir = fileURLToPath(new URL('../../suites/demo/demo-potency', import.meta.url));
const ORCHESTRATOR_SYSTEM = 'You are Qwen Code, a non-interactive CLI agent (as the harness says).';
const SUBAGENT_SYSTEM = 'You are a general-purpose subagent working for a parent agent.';
const WORKSPACE_REMINDER =
  "<system-reminder>\nI'm currently working in the directory: /tmp/ws\n</system-reminder>";

let bareTask: string;
beforeAll(async () => {
  bareTask = renderTaskPrompt(await loadTask(taskDir));
});

/** The toy's answer to a conversation, as the assistant message the harness would record. */
function answer(weights: ToyWeights, messages: ChatMessage[], seed: number): ChatMessage {
  // The harness offers the delegation tool, as it does in every team episode.
  const tools = [{ type: 'function', function: { name: 'agent' } }];
  const request = { body: { messages, seed, tools } } as unknown as ScriptedRequest;
  const reply = toyResponder({ weights })(request) as Step;
  if (reply.kind !== 'reply') throw new Error(`the toy answered with ${reply.kind}`);
  return {
    role: 'assistant',
    content: reply.reply.content ?? null,
    ...(reply.reply.reasoning ? { reasoning_content: reply.reply.reasoning } : {}),
    ...(reply.reply.toolCalls
      ? {
          tool_calls: reply.reply.toolCalls.map((call, index) => ({
            id: `call_${seed}_${index}`,
            type: 'function' as const,
            function: {
              name: call.name,
              arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
            },
          })),
        }
      : {}),
  };
}

function userMessage(prompt: string): ChatMessage {
  return {
    role: 'user',
    content: [
      { type: 'text', text: WORKSPACE_REMINDER },
      { type: 'text', text: prompt },
    ],
  };
}

/**
 * One orchestrator turn on the bare task and, when it delegated, the first turn (the script) of the subagent it
 * started: what a selected trajectory of a generation with these weights shows.
 */
function trajectory(weights: ToyWeights, seed: number): SupervisedConversation[] {
  const orchestratorMessages: ChatMessage[] = [
    { role: 'system', content: ORCHESTRATOR_SYSTEM },
    userMessage(bareTask),
  ];
  const first = answer(weights, orchestratorMessages, seed);
  const conversations: SupervisedConversation[] = [
    { role: 'orchestrator', messages: [...orchestratorMessages, first], targets: [2] },
  ];
  const delegation =
    first.role === 'assistant' ? first.tool_calls?.find((call) => call.function.name === 'agent') : undefined;
  if (delegation) {
    const workerPrompt = (JSON.parse(delegation.function.arguments) as { prompt: string }).prompt;
    const subagentMessages: ChatMessage[] = [
      { role: 'system', content: SUBAGENT_SYSTEM },
      userMessage(workerPrompt),
    ];
    conversations.push({
      role: 'subagent',
      messages: [...subagentMessages, answer(weights, subagentMessages, seed)],
      targets: [2],
    });
  }
  return conversations;
}

describe('trainToyWeights', () => {
  const diligent: ToyWeights = {
    ...BASE_TOY_WEIGHTS,
    delegateBare: 1,
    runChecks: 1,
    completeReport: 1,
    careful: 1,
  };

  it('moves each weight halfway to the rate seen in the supervised turns', () => {
    const conversations = [1, 2, 3].flatMap((seed) => trajectory(diligent, seed));
    const observations = observeToyBehaviours(conversations);
    expect(observations.delegateBare).toEqual({ shown: 3, opportunities: 3 });
    // The implicit team's analyst has one check (outputs_complete) and writes the results; the reporter has not started.
    expect(observations.runChecks).toEqual({ shown: 3, opportunities: 3 });
    expect(observations.careful).toEqual({ shown: 3, opportunities: 3 });
    expect(observations.completeReport).toEqual({ shown: 0, opportunities: 0 });

    const trained = trainToyWeights(BASE_TOY_WEIGHTS, conversations);
    expect(trained).toEqual({
      ...BASE_TOY_WEIGHTS,
      generation: 1,
      delegateBare: 0.525,
      delegateWithWorkflow: 0.925,
      runChecks: 0.75,
      careful: 0.85,
      // Never observed: unchanged.
      completeReport: BASE_TOY_WEIGHTS.completeReport,
    });
  });

  it('moves weights down when the selected trajectories show the opposite', () => {
    const alone: ToyWeights = { ...BASE_TOY_WEIGHTS, delegateBare: 0, completeReport: 0, careful: 1 };
    const conversations = [4, 5].flatMap((seed) => trajectory(alone, seed));
    expect(conversations.map((conversation) => conversation.role)).toEqual(['orchestrator', 'orchestrator']);
    const trained = trainToyWeights({ ...BASE_TOY_WEIGHTS, delegateBare: 0.4 }, conversations, {
      learningRate: 0.25,
    });
    expect(trained.delegateBare).toBeCloseTo(0.3, 6);
    // The lone orchestrator writes the report in its own script: a brief one.
    expect(trained.completeReport).toBeCloseTo(0.6 - 0.25 * 0.6, 6);
  });

  it('reads only training targets, and gives the same weights for the same inputs', () => {
    const conversations = [6, 7].flatMap((seed) => trajectory(diligent, seed));
    const untargeted = conversations.map((conversation) => ({ ...conversation, targets: [] }));
    expect(trainToyWeights(BASE_TOY_WEIGHTS, untargeted)).toEqual({ ...BASE_TOY_WEIGHTS, generation: 1 });
    const before = JSON.stringify(conversations);
    expect(trainToyWeights(BASE_TOY_WEIGHTS, conversations)).toEqual(
      trainToyWeights(BASE_TOY_WEIGHTS, conversations),
    );
    expect(JSON.stringify(conversations)).toBe(before);
    expect(() => trainToyWeights(BASE_TOY_WEIGHTS, conversations, { learningRate: 0 })).toThrow(
      /learningRate/,
    );
  });

  it('saves and loads weights, refusing a file that is not weights', async () => {
    const directory = temporaryDirectory('mass-toy-weights-');
    try {
      const file = `${directory.path}/L1/weights.json`;
      const trained = trainToyWeights(BASE_TOY_WEIGHTS, trajectory(diligent, 8));
      await saveToyWeights(file, trained);
      expect(await loadToyWeights(file)).toEqual(trained);
      await writeFile(file, JSON.stringify({ ...trained, runChecks: 2 }));
      await expect(loadToyWeights(file)).rejects.toThrow(/runChecks/);
    } finally {
      directory.remove();
    }
  });
});
