export * from './log-row.js';
export * from './recording-proxy.js';
export * from './token-meter.js';
export * from './upstream-retry.js';
