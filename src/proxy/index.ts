export * from './log-row.js';
export * from './recording-proxy.js';
export * from './token-meter.js';
