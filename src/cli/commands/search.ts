import { SystemError } from '../../errors.js';
import type { ServedGeneration } from '../../train/model-host.js';
import { searchSettings } from '../../search/search-config.js';
import { searchTasks, type SearchSummary } from '../../search/search-tasks.js';
import { openRunSession } from '../../session/run-session.js';
import { parsePositiveInteger } from '../duration.js';
import { SearchProgressDisplay } from '../search-progress-display.js';

interface SearchFlags {
  config: string;
  runs: string;
  tasks?: string;
  iterations?: string;
  generation: string;
  overrideConfig?: boolean;
  skipDoctor?: boolean;
  json?: boolean;
}

export async function searchAction(flags: SearchFlags): Promise<void> {
  const iterations =
    flags.iterations === undefined ? undefined : parsePositiveInteger(flags.iterations, '--iterations');
  const tasks = flags.tasks
    ?.split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  const session = await openRunSession({
    configFile: flags.config,
    runsDirectory: flags.runs,
    overrideConfig: flags.overrideConfig,
    command: 'mass search',
    // Another generation than L0 may be served under a name of its own.
    serverChecks: {
      skip: flags.skipDoctor,
      listing: flags.generation === 'L0' ? 'required' : 'any-served',
      runtimeLora: false,
      evaluation: false,
    },
    adjust: (config) => ({
      ...config,
      ...(tasks ? { tasks } : {}),
      search: { ...config.search, ...(iterations === undefined ? {} : { iterations }) },
    }),
  });
  const { run, config } = session;
  const display = new SearchProgressDisplay();
  let summary: SearchSummary;
  let served: ServedGeneration | undefined;
  try {
    const taskDirs = await session.taskDirs();
    // Budgets are counted with the model's own tokenizer, the one its training data is made with.
    const stage = await session.stage({
      generation: flags.generation,
      taskDirs,
      serve: 'base',
      makesTrainingData: false,
    });
    served = stage.served;
    const { fitted, tokenCounter } = stage;
    process.stderr.write(
      `mass search: ${taskDirs.length} task(s) × ${config.search.iterations} iterations, ${config.search.championRule} rule, judge ${config.search.judgeMode}; run ${run.directory}\n`,
    );
    summary = await searchTasks({
      run,
      generation: flags.generation,
      taskDirs,
      concurrency: config.concurrency,
      ...stage.roles,
      settings: searchSettings(fitted),
      tokenCounter,
      hiddenDirectories: [run.directory],
      episodes: session.episodes,
      onProgress: display.onEvent,
      budgets: config.budgets,
      executorPrices: config.roles.executor.prices,
    });
  } finally {
    display.stop();
    await served?.close();
    await session.close();
  }
  if (flags.json) console.log(JSON.stringify(summary, null, 2));
  else console.log(describeSummary(summary, run.directory, flags.generation));
  if (summary.outage) throw new SystemError(`mass search stopped: ${summary.outage}`);
  if (summary.failures.length > 0) {
    throw new SystemError(
      `${summary.failures.length} task search(es) stopped: ${summary.failures
        .map((failure) => `${failure.taskDir}: ${failure.error}`)
        .join('; ')}. Run the same command again to resume; finished steps are kept.`,
    );
  }
}

function describeSummary(summary: SearchSummary, runDirectory: string, generation: string): string {
  const rows = summary.results.map((result) => {
    const { counts } = result;
    return [
      result.task,
      result.champion,
      result.beatsReference ? 'yes' : 'no',
      `${counts.episodes} (${counts.failedEpisodes} failed)`,
      `${counts.judgments} (${counts.failedJudgments} failed)`,
      String(counts.failedProposals),
    ];
  });
  const header = ['task', 'champion', 'beats reference', 'episodes', 'judgments', 'failed proposals'];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const format = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ');
  return [
    format(header),
    ...rows.map(format),
    '',
    ...(summary.lostToOutages.length > 0
      ? [
          `${summary.lostToOutages.length} piece(s) of work lost to model-server outages and redone: ${runDirectory}/outages.jsonl`,
        ]
      : []),
    `Champions, designs, verdicts and optimizer calls: ${runDirectory}/search/${generation}/<task>/`,
  ].join('\n');
}
