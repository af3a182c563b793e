/** `mass status`: a run's progress, in-flight work, throughput, problems and ETAs, from its records alone. */
export { readRunRecords, type RunRecords } from './read-run.js';
export { summariseRun, DEFAULT_WINDOW_MS } from './summarise.js';
export { renderStatusText } from './render-text.js';
export { renderStatusJson } from './render-json.js';
export type { RunStatus } from './run-status.js';
