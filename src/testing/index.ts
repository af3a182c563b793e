export * from './scripted-server.js';
export * from './steps.js';
