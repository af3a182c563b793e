// The run's log in one place: the schema of every record a run directory holds, and its readers.
export * from './bundle-summary.js';
export * from './episode-failure.js';
export * from './episode-record.js';
export * from './evaluation-figures.js';
export * from './execution-metadata.js';
export * from './judgment-record.js';
export * from './model-generation.js';
export * from './optimizer-history.js';
export * from './registry.js';
export * from './repeat-records.js';
export * from './rsi-records.js';
export * from './search-records.js';
export * from './training-metrics.js';
export * from './training-records.js';
export * from './verdict.js';
