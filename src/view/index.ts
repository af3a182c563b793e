export { respond } from './respond.js';
export { startViewer, type RunningViewer } from './viewer-server.js';
