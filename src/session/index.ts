export * from './endpoint-pools.js';
export * from './prepare-stage.js';
export * from './run-session.js';
export * from './training-tokenizer.js';
