import type { Command } from 'commander';

import { DEFAULT_WINDOW_LIMITS } from '../../distill/pack-windows.js';
import { lazyAction } from './lazy-action.js';

export function declareData(program: Command): void {
  const data = program
    .command('data')
    .description('Training data from selected episodes: build the windows, plan the sampler');

  data
    .command('build')
    .description(
      'Render the episodes’ conversations with the model’s chat template into windows labelled on its own outputs',
    )
    .option('--episodes <dir...>', 'episode directories for the training split')
    .option('--validation <dir...>', 'episode directories for the validation split')
    .option(
      '--task-dir <dir...>',
      'task folders or suites where tasks are found by id (default: the folder each episode recorded)',
    )
    .option(
      '--model-dir <dir>',
      'the served model’s directory: tokenizer.json, tokenizer_config.json, its chat template (default: Qwen3’s files)',
    )
    .option(
      '--allow-tokenizer-mismatch',
      'build even when the model directory’s family is not the served model’s (they share one vocabulary)',
    )
    .requiredOption('--out <dir>', 'output directory')
    .option('--window <tokens>', 'tokens per window', String(DEFAULT_WINDOW_LIMITS.windowTokens))
    .option(
      '--max-context <tokens>',
      'masked context tokens before a window’s first trained turn',
      String(DEFAULT_WINDOW_LIMITS.maxContextTokens),
    )
    .option(
      '--header-fraction <share>',
      'the largest share of a window the system prompt and first user message may take',
      String(DEFAULT_WINDOW_LIMITS.maxHeaderFraction),
    )
    .option(
      '--single-agent',
      'baseline data from bare-task episodes: the orchestrator thread only (the single-agent comparison)',
    )
    .option('--allow-failed', 'use episodes that did not succeed too')
    .option(
      '--verify-every-turn',
      'prove the template split on every trained turn (slower: one render per turn)',
    )
    .option('--json', 'print the statistics as JSON')
    .action(lazyAction(async () => (await import('../commands/data.js')).dataBuildAction));

  data
    .command('sample')
    .description(
      'The training sampler (task uniformly, orchestrator with a probability, a window; with replacement): exact processed supervised tokens',
    )
    .requiredOption('--data <dir>', 'a directory written by mass data build')
    .option('--split <split>', 'train or validation', 'train')
    .requiredOption('--steps <n>', 'training steps')
    .requiredOption('--batch-size <n>', 'windows per step')
    .option('--seed <n>', 'sampler seed', '0')
    .option('--orchestrator-probability <p>', 'chance of drawing the task’s orchestrator windows', '1/3')
    .option('--plan <file>', 'write the drawn window ids, one JSON line per step')
    .option('--json', 'print JSON')
    .action(lazyAction(async () => (await import('../commands/data.js')).dataSampleAction));
}
