export * from './matches.js';
export * from './bradley-terry.js';
export type { FitAlgorithm, FitMode } from './strength-iterations.js';
export type { StandardErrorMethod } from './standard-errors.js';
export { connectedComponents } from './connectivity.js';
export * from './schedules.js';
export * from './adaptive-schedule.js';
export * from './seeded-random.js';
