export * from './scripted-server.js';
export * from './scripted-team.js';
export * from './strict-requests.js';
export * from './replay-server.js';
