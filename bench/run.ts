// `npm run bench`: every benchmark, printed as JSON. Figures are ratios measured side by side in one run.
import { benchDataBuilder } from './data-builder.bench.js';
import { benchEpisodes } from './episodes.bench.js';
import { benchEvaluation } from './evaluation.bench.js';
import { benchGenerators } from './generators.bench.js';
import { benchProxy } from './proxy.bench.js';
import { benchQueue } from './queue.bench.js';
import { benchRanking } from './ranking.bench.js';
import { benchRecords } from './records.bench.js';
import { benchView } from './view.bench.js';
import { benchReport } from './report.bench.js';
import { benchTrain } from './train.bench.js';

const only = process.argv[2];
const benchmarks: Record<string, () => Promise<Record<string, unknown>>> = {
  proxy: () => benchProxy(),
  ranking: () => benchRanking(),
  generators: () => benchGenerators(),
  episodes: () => benchEpisodes(),
  'data-builder': () => benchDataBuilder(),
  view: () => benchView(),
  // Not in the default set (minutes of episodes): `npm run bench eval`.
  eval: () => benchEvaluation(),
  // Not in the default set either when it has to make its demo run first: `npm run bench report`.
  report: () => benchReport(),
  // Not in the default set (a paper-sized run of 0.9 GB written and read, about 4 minutes): `npm run bench records`.
  records: () => benchRecords(),
  // Not in the default set (a Redis and worker processes, minutes of episodes): `npm run bench queue`.
  queue: () => benchQueue(),
  // Not in the default set (the trainer's venv, a few minutes of CPU training): `npm run bench train`.
  train: () => benchTrain(),
};

for (const [name, run] of Object.entries(benchmarks)) {
  if (only ? only !== name : ['eval', 'report', 'records', 'queue', 'train'].includes(name)) continue;
  console.error(`bench: ${name}…`);
  console.log(JSON.stringify({ benchmark: name, ...(await run()) }, null, 2));
}
