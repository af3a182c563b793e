export * from './errors.js';
export * from './store/index.js';
