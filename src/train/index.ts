export * from './argv-template.js';
export * from './command-trainer.js';
export * from './dataset-files.js';
export * from './deploy.js';
export * from './hyperparameters.js';
export * from './inference-server.js';
export * from './injected-trainer.js';
export * from './lineage.js';
export {
  logTail,
  runLoggedProcess,
  type LoggedProcessOptions,
  type ProcessOutcome,
} from './logged-process.js';
export * from './python-records.js';
export * from './python-trainer.js';
export * from './trainer.js';
export * from './trainer-python.js';
export * from './model-host.js';
