export * from './rsi-records.js';
export * from './run-generations.js';
