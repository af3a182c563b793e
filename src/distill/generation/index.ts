export {
  distillGeneration,
  type DistillGenerationOptions,
  type DistillGenerationResult,
  type DistillTask,
  type DistilledTask,
} from './distill-generation.js';
export {
  distillSettings,
  type AdaptiveRounds,
  type DistillSettings,
  type ScheduleKind,
} from './distill-settings.js';
