export { respond } from './respond.js';
export { startViewer, type RunningViewer, type ViewerOptions } from './viewer-server.js';
