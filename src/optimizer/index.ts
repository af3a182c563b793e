export * from './actionable-sentences.js';
export * from './execution-metadata.js';
export * from './history.js';
export * from './optimizer-outcome.js';
export * from './optimizer-prompt.js';
export * from './optimizer-reply.js';
export * from './propose-workflow.js';
export * from './recurring-problems.js';
