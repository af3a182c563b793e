export * from './run-generations.js';
