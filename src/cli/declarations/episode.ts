import type { Command } from 'commander';

import {
  DEFAULT_DISK_BYTES,
  DEFAULT_PROCESS_LIMIT,
  THREADS_PER_PROCESS,
} from '../../episode/sandbox-defaults.js';
import { DEFAULT_HARNESS_PROFILE } from '../../harness/qwen-settings.js';
import { lazyAction } from './lazy-action.js';

export function declareEpisode(program: Command): void {
  program
    .command('episode')
    .description('Run one episode: the team (qwen-code) on a task, sandboxed, every model call recorded')
    .requiredOption('--task <dir>', 'the task folder (with task.yaml)')
    .option(
      '--workflow <file>',
      'a team workflow (YAML or JSON), or "initial" for the task\'s own v0; default: the bare task',
    )
    .option('--teacher', 'append the teacher directive (for collecting training data)')
    .option(
      '--single-agent',
      'the harness without its agent tool: one agent works alone (the single-agent condition; no --workflow)',
    )
    .requiredOption('--model <name>', 'the model name the server serves')
    .requiredOption('--base-url <url>', 'the model server, OpenAI style, ending in /v1')
    .option(
      '--api-key-env <variable>',
      'environment variable holding the API key (kept by the proxy, never shown to agents)',
    )
    .requiredOption('--seed <n>', "the sampling seed: the model's seed on every call")
    .option(
      '--data-seed <n>',
      "the data seed: the task's generated data (grading needs it); default: the sampling seed",
    )
    .requiredOption('--out <dir>', 'the episode directory (re-running a finished one does nothing)')
    .option('--timeout <duration>', 'wall-clock limit, e.g. 90s, 30m, 2h', '60m')
    .option('--max-output-tokens <n>', 'completion tokens per model call', '32768')
    .option(
      '--output-budget <n>',
      'completion tokens for the whole episode; past it, model calls are refused',
    )
    .option(
      '--cpu-time <duration>',
      "CPU time of the team's whole process tree, e.g. 2h; default: the timeout times half the machine's cores",
    )
    .option(
      '--max-processes <n>',
      `processes of the team's tree at once (the kernel allows ${THREADS_PER_PROCESS} threads each)`,
      String(DEFAULT_PROCESS_LIMIT),
    )
    .option(
      '--disk-limit <size>',
      'what the workspace and home may take on disk, e.g. 32G, 500M',
      `${DEFAULT_DISK_BYTES / 1024 ** 3}G`,
    )
    .option(
      '--no-sandbox',
      'run without bubblewrap (nothing is isolated: only for machines that cannot have it)',
    )
    .option(
      '--harness-profile <profile>',
      "qwen-code's tools and skills: lean (without those that cannot work in the sandbox or research does not need) or stock (qwen-code's defaults)",
      DEFAULT_HARNESS_PROFILE,
    )
    .option(
      '--private-destination <entry>',
      'a destination whose loopback, private or link-local address the agents may reach if the task lists it (host, host:port or *.suffix; repeat for more); a task alone never opens one',
      (entry: string, entries: string[]) => [...entries, entry],
      [] as string[],
    )
    .option('--json', 'print the episode record as JSON')
    .action(lazyAction(async () => (await import('../commands/episode.js')).episodeAction));
}
