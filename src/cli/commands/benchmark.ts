import { basename, dirname, resolve } from 'node:path';

import type { Command } from 'commander';

import { BenchmarkAgent, usesModel } from '../../benchmark/benchmark-records.js';
import {
  runBenchmarks,
  type BenchmarkDataset,
  type BenchmarkProgress,
} from '../../benchmark/benchmark-run.js';
import { describeBenchmark } from '../../benchmark/describe-benchmark.js';
import { describeInternet, type InternetPolicy } from '../../benchmark/task-environment.js';
import { loadRunConfig, parseRunConfig } from '../../config/run-config.js';
import { checkServersBeforeRun } from '../../doctor/pre-start.js';
import { UserError } from '../../errors.js';
import { parseAllowEntry } from '../../proxy/egress-allow-list.js';
import { episodeBackendFor } from '../../queue/backend-from-config.js';
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

export function registerBenchmark(program: Command): void {
  program
    .command('benchmark')
    .description(
      "Runs public benchmarks in Harbor's task format on the run's generations: each trial's workspace verified by the task's tests/test.sh in a fresh sandbox; mean reward, output tokens and reward per 1,000 output tokens per generation (the paper's Figure 3)",
    )
    .requiredOption('--config <file>', 'the run configuration (its generations and model server)')
    .requiredOption(
      '--tasks <folders...>',
      'Harbor task folders (with a task.toml), or dataset folders holding them; each dataset is one benchmark',
    )
    .option('--runs <dir>', 'the folder holding run directories; the run is <dir>/<name>/', 'runs')
    .option('--generations <names>', 'comma-separated generations (default: every registered one)')
    .option('--trials <n>', 'trials per task and generation, paired by sampling seed across generations', '1')
    .option(
      '--agent <agent>',
      "team (the generation's model with the agent tool, no design), single-agent, or Harbor's reference agents oracle (runs solution/solve.sh) and nop (does nothing)",
      'team',
    )
    .option(
      '--internet <policy>',
      "tasks that ask for the internet (allow_internet true or left out): public (the default: every public host through the trial's egress proxy, each request logged in egress.jsonl), allow:<host,…> (an allow-list, through the same proxy), offline (no network) or refuse (skip them); the agent, the oracle and the verifier get the same, and tasks with allow_internet = false none",
      'public',
    )
    .option(
      '--host-images <images>',
      'comma-separated container images whose environment this host provides: tasks naming one run in bubblewrap',
    )
    .option(
      '--container-engine <engine>',
      "docker or podman: runs tasks that need their own image (a Dockerfile or docker_image) in a container of it, with the sandbox's mounts and the model reached only through the episode's proxy; without it they are skipped",
    )
    .option('--skip-doctor', 'skip the model server checks before the first episode')
    .option('--json', 'print the summaries as JSON')
    .action(async (flags: BenchmarkFlags) => {
      const agent = parseAgent(flags.agent);
      const trials = parsePositiveInteger(flags.trials, '--trials');
      const internet = parseInternet(flags.internet);
      const generations = list(flags.generations);
      const containerEngine = parseEngine(flags.containerEngine);
      const datasets = await datasetsOf(flags.tasks);
      const config = parseRunConfig(await loadRunConfig(flags.config), flags.config);
      if (usesModel(agent) && !flags.skipDoctor) {
        await checkServersBeforeRun(config, {
          command: 'mass benchmark',
          listing: 'any-served',
          runtimeLora: true,
          evaluation: true,
        });
      }
      const run = openEvaluatedRun(config, flags.runs);
      const progress = progressLine();
      const episodes = episodeBackendFor(run.config, run.directory);
      let summaries;
      try {
        summaries = await runBenchmarks({
          run,
          datasets,
          agent,
          ...(generations ? { generations } : {}),
          trials,
          internet,
          hostCompatibleImages: list(flags.hostImages) ?? [],
          containerEngine,
          episodes,
          onProgress: progress,
        });
      } finally {
        await episodes.close();
        run.close();
      }
      if (flags.json) console.log(JSON.stringify(summaries, null, 2));
      else console.log(summaries.map((summary) => describeBenchmark(summary)).join('\n\n'));
    });
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

/** A line on stderr per benchmark planned (with its skipped tasks), then progress at most once a second. */
function progressLine(): (event: BenchmarkProgress) => void {
  let planned = 0;
  const done = { trial: 0, verification: 0 };
  let last = 0;
  return (event) => {
    if (event.kind === 'planned') {
      planned += event.trials;
      process.stderr.write(`mass benchmark: ${event.benchmark}: ${event.trials} trial(s)\n`);
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
