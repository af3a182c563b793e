import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareAnalyze(program: Command): void {
  const analyze = program
    .command('analyze')
    .description(
      'Analyses of a run’s records, computed beside them (the paper’s figures of what is learned)',
    );
  analyze
    .command('workflows')
    .description(
      'Where the designs of a generation’s searches carry their task information (the paper’s Figure 5): each component (role, instruction, contract, hops) and the task descriptions embedded, the mutual information between them estimated, first design against final and every iteration between; written to analysis/workflows/<generation>.json',
    )
    .argument('<run-dir>', 'the run directory (e.g. runs/demo)')
    .option('--generation <name>', 'the generation whose searches to analyse', 'L0')
    .option(
      '--embeddings <endpoint>',
      'an OpenAI-compatible base URL serving an embedding model (e.g. http://localhost:8000/v1), cached in the run directory; default: the offline TF-IDF + truncated SVD embedding',
    )
    .option('--embeddings-model <model>', 'the embedding model (default: the endpoint’s only model)')
    .option('--embeddings-key-env <name>', 'the environment variable holding the endpoint’s API key')
    .option(
      '--dimensions <k>',
      'principal components kept of each embedding (default 3; of the task descriptions at most one fewer than there are tasks)',
    )
    .option('--permutations <n>', 'seeded shuffles of the tasks for the baseline', '200')
    .option('--bootstrap <n>', 'bootstrap resamples of the tasks for the intervals', '200')
    .option('--seed <n>', 'the seed of the shuffles and resamples', '0')
    .option('--json', 'print the record as JSON')
    .action(lazyAction(async () => (await import('../commands/analyze.js')).analyzeWorkflowsAction));
}
