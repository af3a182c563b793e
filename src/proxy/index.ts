export type { ListenAddress } from './listen-address.js';
export * from './log-row.js';
export * from './recording-proxy.js';
export * from './token-meter.js';
export { upstreamTarget } from './upstream-target.js';
export * from './upstream-retry.js';
