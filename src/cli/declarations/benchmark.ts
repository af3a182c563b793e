import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareBenchmark(program: Command): void {
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
    .action(lazyAction(async () => (await import('../commands/benchmark.js')).benchmarkAction));
}
