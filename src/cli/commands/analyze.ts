import { resolve } from 'node:path';

import { endpointEmbedder, offlineEmbedder } from '../../analyze/embeddings.js';
import { analyzeWorkflowInformation } from '../../analyze/workflow-information.js';
import { formatWorkflowInformation } from '../../records/workflow-information-table.js';
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

export async function analyzeWorkflowsAction(runDirectory: string, options: WorkflowsOptions): Promise<void> {
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
