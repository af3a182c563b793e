// The run's log in one place: the schema of every record a run directory holds, and its readers.
export * from './evaluation-figures.js';
export * from './model-generation.js';
export * from './registry.js';
export * from './rsi-records.js';
export * from './training-metrics.js';
export * from './training-records.js';
