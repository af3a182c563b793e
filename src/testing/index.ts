export * from './scripted-server.js';
export * from './steps.js';
export * from './scripted-team.js';
export * from './toy-model/index.js';
export * from './fault-injection.js';
