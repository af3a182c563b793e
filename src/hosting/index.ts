export * from './model-kind.js';
export * from './served-host.js';
