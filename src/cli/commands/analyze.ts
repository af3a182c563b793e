import { resolve } from 'node:path';

import type { Command } from 'commander';

import { endpointEmbedder, offlineEmbedder } from '../../analyze/embeddings.js';
import { analyzeWorkflowInformation } from '../../analyze/workflow-information.js';
import { formatWorkflowInformation } from '../../analyze/workflow-information-table.js';
import { UserError } from '../../errors.js';
import { workflowInformationPath } from '../../store/run-paths.js';

interface WorkflowsOptions {
  generation: string;
  embeddings?: string;
  embeddingsModel?: string;
  embeddingsKeyEnv?: string;
  dimensions?: string;
  permutations: string;
  bootstrap: string;
  seed: string;
  json?: boolean;
}

export function registerAnalyze(program: Command): void {
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
    .action(async (runDirectory: string, options: WorkflowsOptions) => {
      const directory = resolve(runDirectory);
      const embedder = options.embeddings
        ? endpointEmbedder({
            baseUrl: options.embeddings,
            model: options.embeddingsModel,
            apiKey: apiKey(options.embeddingsKeyEnv),
            runDirectory: directory,
          })
        : offlineEmbedder();
      if (!options.embeddings && (options.embeddingsModel || options.embeddingsKeyEnv)) {
        throw new UserError('--embeddings-model and --embeddings-key-env go with --embeddings <endpoint>');
      }
      const record = await analyzeWorkflowInformation({
        runDirectory: directory,
        generation: options.generation,
        embedder,
        dimensions: options.dimensions === undefined ? undefined : count(options.dimensions, '--dimensions'),
        permutations: count(options.permutations, '--permutations'),
        bootstrap: count(options.bootstrap, '--bootstrap'),
        seed: count(options.seed, '--seed', 0),
      });
      if (options.json) {
        console.log(JSON.stringify({ schemaVersion: 1, kind: 'workflow-information', ...record }, null, 2));
      } else {
        console.log(formatWorkflowInformation(record));
      }
      console.error(
        `mass analyze workflows: written to ${workflowInformationPath(options.generation)} in ${directory}; mass report draws it`,
      );
    });
}

function apiKey(variable: string | undefined): string | undefined {
  if (variable === undefined) return undefined;
  const value = process.env[variable];
  if (!value) throw new UserError(`--embeddings-key-env ${variable}: that environment variable is not set`);
  return value;
}

function count(value: string, flag: string, minimum = 1): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isInteger(number) || number < minimum) {
    throw new UserError(`${flag} "${value}": give a whole number of at least ${minimum}`);
  }
  return number;
}
