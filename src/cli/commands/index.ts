import type { Command } from 'commander';

/**
 * Every `mass` subcommand, by name, registers itself from its own file in this folder. Each is imported only when
 * needed (`mass episode` loads the episode's modules, not the report's or the trainer's): a command starts sooner.
 */
export const commands: Record<string, () => Promise<(program: Command) => void>> = {
  demo: async () => (await import('./demo.js')).registerDemo,
  episode: async () => (await import('./episode.js')).registerEpisode,
  proxy: async () => (await import('./proxy.js')).registerProxy,
  log: async () => (await import('./log.js')).registerLog,
  models: async () => (await import('./models.js')).registerModels,
  doctor: async () => (await import('./doctor.js')).registerDoctor,
  tasks: async () => (await import('./tasks.js')).registerTasks,
  rank: async () => (await import('./rank.js')).registerRank,
  data: async () => (await import('./data.js')).registerData,
  judge: async () => (await import('./judge.js')).registerJudge,
  search: async () => (await import('./search.js')).registerSearch,
  distill: async () => (await import('./distill.js')).registerDistill,
  rsi: async () => (await import('./rsi.js')).registerRsi,
  train: async () => (await import('./train.js')).registerTrain,
  eval: async () => (await import('./eval.js')).registerEval,
  benchmark: async () => (await import('./benchmark.js')).registerBenchmark,
  report: async () => (await import('./report.js')).registerReport,
  compare: async () => (await import('./compare.js')).registerCompare,
  analyze: async () => (await import('./analyze.js')).registerAnalyze,
  students: async () => (await import('./students.js')).registerStudents,
  config: async () => (await import('./config.js')).registerConfig,
  view: async () => (await import('./view.js')).registerView,
  worker: async () => (await import('./worker.js')).registerWorker,
  queue: async () => (await import('./queue.js')).registerQueue,
};
