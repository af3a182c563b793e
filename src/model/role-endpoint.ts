import type { ChatModel, SamplingParams } from './types.js';

/**
 * Where the team's episodes send their calls (each through its own recording proxy): the executor's endpoint, as
 * the search, the distillation and the queue's workers all take it.
 */
export interface ExecutorEndpoint {
  /** The name the server serves the model under. */
  model: string;
  /** OpenAI style, ending in `/v1`. */
  baseUrl: string;
  apiKey?: string;
  /** The variable the key came from: what a queue sends its workers instead of the key. */
  apiKeyEnv?: string;
}

/** A role played through a chat endpoint: the judge or the optimizer. */
export interface RoleModel {
  model: ChatModel;
  /** The name the server serves the model under. */
  modelName: string;
  sampling: SamplingParams;
}
