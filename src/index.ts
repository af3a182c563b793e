export * from './errors.js';
export * from './model/index.js';
export * from './proxy/index.js';
export * from './store/index.js';
export * from './testing/index.js';
export * from './tasks/index.js';
export * from './workflow/index.js';
export * from './optimizer/index.js';
