export * from './step-keys.js';
export * from './work-item.js';
export * from './work-runner.js';
