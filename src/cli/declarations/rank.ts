import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareRank(program: Command): void {
  program
    .command('rank')
    .description('Rank players (episodes) from pairwise judgments with a Bradley–Terry fit')
    .requiredOption(
      '--matches <file>',
      'JSONL, one judgment a line: {"a": id, "b": id, "winner": "a"|"b"|"tie"}',
    )
    .option(
      '--prior <wins>',
      'virtual wins and, as many, losses per player against a strength-1 player; 0 for plain maximum likelihood',
      '0.5',
    )
    .option(
      '--official',
      'official-code compatibility: its update (prior wins over half the virtual games, strengths rescaled to mean 1 each step), not the true fit of the prior',
    )
    .option('--json', 'print JSON: {scores, stderr, ranking, iterations, converged, …}')
    .action(lazyAction(async () => (await import('../commands/rank.js')).rankAction));
}
