import type { Command } from 'commander';

import { declareAnalyze } from './analyze.js';
import { declareBenchmark } from './benchmark.js';
import { declareCompare } from './compare.js';
import { declareConfig } from './config.js';
import { declareData } from './data.js';
import { declareDemo } from './demo.js';
import { declareDistill } from './distill.js';
import { declareDoctor } from './doctor.js';
import { declareEpisode } from './episode.js';
import { declareEval } from './eval.js';
import { declareExport } from './export.js';
import { declareJudge } from './judge.js';
import { declareLog } from './log.js';
import { declareModels } from './models.js';
import { declarePlan } from './plan.js';
import { declareProxy } from './proxy.js';
import { declareQueue } from './queue.js';
import { declareRank } from './rank.js';
import { declareReport } from './report.js';
import { declareRsi } from './rsi.js';
import { declareSearch } from './search.js';
import { declareStatus } from './status.js';
import { declareStudents } from './students.js';
import { declareTasks } from './tasks.js';
import { declareTrain } from './train.js';
import { declareView } from './view.js';
import { declareWorker } from './worker.js';

/**
 * Every `mass` command, in the order `mass --help` lists them. Each declares its arguments and options in its own file
 * of this folder, which loads nothing but commander and small modules of defaults; its work, in `../commands/`, is
 * imported when it runs (`lazy-action.ts`).
 */
const COMMANDS: ReadonlyArray<(program: Command) => void> = [
  declareDemo,
  declareEpisode,
  declareProxy,
  declareLog,
  declareModels,
  declareDoctor,
  declarePlan,
  declareTasks,
  declareRank,
  declareData,
  declareJudge,
  declareSearch,
  declareDistill,
  declareRsi,
  declareTrain,
  declareExport,
  declareEval,
  declareBenchmark,
  declareReport,
  declareCompare,
  declareAnalyze,
  declareStudents,
  declareConfig,
  declareView,
  declareStatus,
  declareWorker,
  declareQueue,
];

export function declareCommands(program: Command): void {
  for (const declare of COMMANDS) declare(program);
}
