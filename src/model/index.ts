export * from './types.js';
export * from './anthropic.js';
export * from './openai-compatible.js';
export * from './create-model.js';
export { Semaphore } from './concurrency.js';
export { DEFAULT_RETRY_POLICY, type CallFailure, type RetryPolicy } from './retry.js';
export { StreamAccumulator, type ReassembledCompletion } from './stream-accumulator.js';
export { SseParser, type SseEvent } from './sse.js';
export * from './request-parameters.js';
