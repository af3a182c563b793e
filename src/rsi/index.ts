export * from './prepare-stage.js';
export * from './rsi-records.js';
export * from './run-generations.js';
export * from './training-tokenizer.js';
