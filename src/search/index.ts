export * from './champion.js';
export * from './search-config.js';
export * from './search-progress.js';
export * from './search-task.js';
export * from './search-tasks.js';
export * from './stabiliser.js';
export * from './outage-gate.js';
