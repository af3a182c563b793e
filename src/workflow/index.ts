export * from './workflow.js';
export * from './render.js';
export * from './parse-workflow.js';
export * from './structured-text.js';
export * from './workflow-diff.js';
export * from './word-diff.js';
