export * from './deployment-check.js';
export * from './generation-serving.js';
export * from './rsi-records.js';
export * from './run-generations.js';
export * from './trainer-from-config.js';
