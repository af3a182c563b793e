import { basename, dirname, resolve } from 'node:path';

import { BenchmarkAgent, usesModel } from '../../records/benchmark-records.js';
import {
  runBenchmarks,
  type BenchmarkDataset,
  type BenchmarkProgress,
} from '../../benchmark/benchmark-run.js';
import { describeBenchmark } from '../../benchmark/describe-benchmark.js';
import { describeInternet, type InternetPolicy } from '../../benchmark/task-environment.js';
import type { RunConfig } from '../../config/run-config.js';
import { UserError } from '../../errors.js';
import { RunNotifications } from '../../notify/run-notifications.js';
import { benchmarkPlanText } from '../../plan/command-plans.js';
import { parseAllowEntry } from '../../proxy/egress-allow-list.js';
import { openRunSession } from '../../session/run-session.js';
import { isHarborTaskDir, loadHarborDataset } from '../../tasks/harbor-task.js';
import { parsePositiveInteger } from '../duration.js';
import { openEvaluatedRun } from './eval.js';

interface BenchmarkFlags {
  config: string;
  runs: string;
  tasks: string[];
  generations?: string;
  trials: string;
  agent: string;
  internet: string;
  hostImages?: string;
  containerEngine?: string;
  skipDoctor?: boolean;
  json?: boolean;
}

export async function benchmarkAction(flags: BenchmarkFlags): Promise<void> {
  const agent = parseAgent(flags.agent);
  const trials = parsePositiveInteger(flags.trials, '--trials');
  const internet = parseInternet(flags.internet);
  const generations = list(flags.generations);
  const containerEngine = parseEngine(flags.containerEngine);
  const datasets = await datasetsOf(flags.tasks);
  const session = await openRunSession({
    configFile: flags.config,
    runsDirectory: flags.runs,
    command: 'mass benchmark',
    serverChecks: {
      skip: !usesModel(agent) || flags.skipDoctor,
      listing: 'any-served',
      runtimeLora: true,
      evaluation: true,
    },
    open: openEvaluatedRun,
  });
  const progress = progressLine(session.config, usesModel(agent));
  const notifications = new RunNotifications(session.config, session.run.directory, 'mass benchmark');
  let summaries;
  try {
    summaries = await notifications.around(async () => {
      const finished = await runBenchmarks({
        session,
        datasets,
        agent,
        ...(generations ? { generations } : {}),
        trials,
        internet,
        hostCompatibleImages: list(flags.hostImages) ?? [],
        containerEngine,
        onProgress: progress,
      });
      notifications.stageFinished('benchmark', undefined, datasets.map((dataset) => dataset.name).join(', '));
      return finished;
    });
  } finally {
    await session.close();
  }
  if (flags.json) console.log(JSON.stringify(summaries, null, 2));
  else console.log(summaries.map((summary) => describeBenchmark(summary)).join('\n\n'));
  // Nothing measured: a script that checks the exit status must not read it as a benchmark run.
  if (
    summaries.length > 0 &&
    summaries.every((summary) => summary.trials.length === 0 && summary.skipped.length > 0)
  ) {
    process.stderr.write('mass benchmark: no task could be run: every one was skipped (why: above)\n');
    process.exitCode = 1;
  }
}

function list(value: string | undefined): string[] | undefined {
  return value
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function parseAgent(value: string): BenchmarkAgent {
  const parsed = BenchmarkAgent.safeParse(value);
  if (!parsed.success) throw new UserError(`--agent: "${value}" is none of team, single-agent, oracle, nop`);
  return parsed.data;
}

function parseEngine(value: string | undefined): 'docker' | 'podman' | null {
  if (value === undefined) return null;
  if (value === 'docker' || value === 'podman') return value;
  throw new UserError(`--container-engine: "${value}" is neither docker nor podman`);
}

function parseInternet(value: string): InternetPolicy {
  if (value === 'public' || value === 'refuse' || value === 'offline') return { kind: value };
  if (value.startsWith('allow:')) {
    const hosts = list(value.slice('allow:'.length)) ?? [];
    const problems = hosts.flatMap((host) => {
      const parsed = parseAllowEntry(host);
      return parsed.ok ? [] : [parsed.error];
    });
    if (problems.length > 0) throw new UserError(`--internet: ${problems.join('; ')}`);
    if (hosts.length > 0) return { kind: 'allow', hosts };
  }
  throw new UserError(`--internet: "${value}" is none of public, allow:<host,…>, offline, refuse`);
}

/**
 * Each folder given is a benchmark: a dataset's name is its folder's; tasks given one by one form one benchmark named
 * after the folder holding the first.
 */
async function datasetsOf(folders: readonly string[]): Promise<BenchmarkDataset[]> {
  const datasets: BenchmarkDataset[] = [];
  const single: string[] = [];
  for (const folder of folders) {
    if (await isHarborTaskDir(resolve(folder))) single.push(folder);
    else
      datasets.push({
        name: basename(resolve(folder)),
        sources: [resolve(folder)],
        ...(await loadHarborDataset([folder])),
      });
  }
  if (single.length > 0) {
    datasets.push({
      name: basename(dirname(resolve(single[0]!))),
      sources: single.map((folder) => resolve(folder)),
      ...(await loadHarborDataset(single)),
    });
  }
  const names = datasets.map((dataset) => dataset.name);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) {
    throw new UserError(`--tasks: two benchmarks are named ${repeated}; give each dataset folder once`);
  }
  return datasets;
}

/**
 * A line on stderr per benchmark planned (with its plan's time and disk, and its skipped tasks; a benchmark whose
 * every task is skipped has no plan to give), then progress at most once a second.
 */
function progressLine(config: RunConfig, modelAgent: boolean): (event: BenchmarkProgress) => void {
  let planned = 0;
  const done = { trial: 0, verification: 0 };
  let last = 0;
  return (event) => {
    if (event.kind === 'planned') {
      planned += event.trials;
      process.stderr.write(
        event.trials === 0
          ? `mass benchmark: ${event.benchmark}: no trial to run: every task is skipped (below)\n`
          : `mass benchmark: ${event.benchmark}: ${event.trials} trial(s)\n` +
              `${benchmarkPlanText(config, event.trials, modelAgent, `mass benchmark: ${event.benchmark}`)}\n`,
      );
      for (const [internet, tasks] of groupedBy(event.internet)) {
        process.stderr.write(
          `mass benchmark: ${event.benchmark}: internet ${internet} (${describeInternet(internet)}): ${tasks.join(', ')}\n`,
        );
      }
      for (const skipped of event.skipped) {
        process.stderr.write(
          `mass benchmark: ${event.benchmark}: skipped ${skipped.task}: ${skipped.reason}\n`,
        );
      }
      return;
    }
    done[event.what]++;
    if (Date.now() - last >= 1000 || done.verification === planned) {
      last = Date.now();
      process.stderr.write(
        `mass benchmark: trials ${done.trial}/${planned}, verified ${done.verification}/${planned}\n`,
      );
    }
  };
}

/** The tasks of each network, in the order the networks first appear. */
function groupedBy(entries: ReadonlyArray<{ task: string; internet: string }>): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const { task, internet } of entries) groups.set(internet, [...(groups.get(internet) ?? []), task]);
  return groups;
}
