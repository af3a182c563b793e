import type { Command } from 'commander';

import { declareAnalyze } from './analyze.js';
import { declareDemo } from './demo.js';
import { declareDoctor } from './doctor.js';
import { declareSearch } from './search.js';
import { declareDistill } from './distill.js';
import { declareRsi } from './rsi.js';
import { declareEval } from './eval.js';
import { declareBenchmark } from './benchmark.js';
import { declareCompare } from './compare.js';
import { declareData } from './data.js';
import { declareEpisode } from './episode.js';
import { declareJudge } from './judge.js';
import { declareLog } from './log.js';
import { declareModels } from './models.js';
import { declareProxy } from './proxy.js';
import { declareQueue } from './queue.js';
import { declareRank } from './rank.js';
import { declareReport } from './report.js';
import { declareStudents } from './students.js';
import { declareTasks } from './tasks.js';
import { declareTrain } from './train.js';
import { declareView } from './view.js';
import { declareWorker } from './worker.js';

type Declare = (program: Command) => void;

/** A command not declared in this folder yet: its whole module, loaded, registers it. */
type Entry = Declare | { load: () => Promise<Declare> };

/**
 * Every `mass` command, in the order `mass --help` lists them. Each declares its arguments and options in its own file
 * of this folder, which loads nothing but commander; its work, in `../commands/`, is imported when it runs.
 */
const COMMANDS: readonly Entry[] = [
  declareDemo,
  declareEpisode,
  declareProxy,
  declareLog,
  declareModels,
  declareDoctor,
  declareTasks,
  declareRank,
  declareData,
  declareJudge,
  declareSearch,
  declareDistill,
  declareRsi,
  declareTrain,
  declareEval,
  declareBenchmark,
  declareReport,
  declareCompare,
  declareAnalyze,
  declareStudents,
  { load: async () => (await import('../commands/config.js')).registerConfig },
  declareView,
  declareWorker,
  declareQueue,
];

export async function declareCommands(program: Command): Promise<void> {
  for (const entry of COMMANDS) (typeof entry === 'function' ? entry : await entry.load())(program);
}
