import type { Command } from 'commander';

import { registerConfig } from './config.js';
import { registerData } from './data.js';
import { registerDistill } from './distill.js';
import { registerDemo } from './demo.js';
import { registerEpisode } from './episode.js';
import { registerEval } from './eval.js';
import { registerJudge } from './judge.js';
import { registerModels } from './models.js';
import { registerProxy } from './proxy.js';
import { registerQueue } from './queue.js';
import { registerRank } from './rank.js';
import { registerReport } from './report.js';
import { registerRsi } from './rsi.js';
import { registerSearch } from './search.js';
import { registerTasks } from './tasks.js';
import { registerView } from './view.js';
import { registerWorker } from './worker.js';

/** Every `mass` subcommand registers itself here; one file per command in this folder. */
export const commands: Array<(program: Command) => void> = [
  registerDemo,
  registerEpisode,
  registerProxy,
  registerModels,
  registerTasks,
  registerRank,
  registerData,
  registerJudge,
  registerSearch,
  registerDistill,
  registerRsi,
  registerEval,
  registerReport,
  registerConfig,
  registerView,
  registerWorker,
  registerQueue,
];
