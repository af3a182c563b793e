export * from './toy-model.js';
export * from './weights.js';
export * from './toy-trainer.js';
export * from './toy-marker.js';
export { isJudgeSystemPrompt, scoreBundle, type BundleScore } from './toy-judge.js';
export { isOptimizerSystemPrompt } from './toy-optimizer.js';
