import { UserError } from '../errors.js';
import type { Endpoint, EvaluationConfig, RunConfig } from '../config/run-config.js';
import type { LoadedSuite } from '../tasks/load-suite.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { searchCoverageSettings } from '../config/search-coverage-setting.js';
import type { ModelGeneration } from '../records/model-generation.js';
import type { ModelRegistry } from '../records/registry.js';

/** A model under evaluation: a generation of the run's registry, or a named endpoint of the configuration. */
export interface EvaluatedModel {
  name: string;
  /** The name its server serves it under. */
  servedAs: string;
  /** The generation it was trained from; null for a base or a named endpoint. */
  parent: string | null;
  /** Where it is served: a generation on the executor's server, under its name; a named model as configured. */
  endpoint: Endpoint;
  /** The generation of the registry it is, which the run's model host serves; absent for a named endpoint. */
  generation?: ModelGeneration;
}

export interface EvaluationJudge {
  /** How figures name it. */
  name: string;
  endpoint: Endpoint;
}

export interface EvaluationPlan {
  models: EvaluatedModel[];
  comparisons: Array<{ candidate: string; baseline: string }>;
  tasks: LoadedTask[];
  judges: EvaluationJudge[];
}

/**
 * What an evaluation compares: the configuration's named endpoints, else the registry's generations (all, or those
 * named); comparisons as given, else each model against the first and against its parent; the tasks named, else the
 * suite's test split. With `comparisons: []` only the workflow transfers run (planned by `planTransfers`), and the
 * comparisons have no tasks.
 */
export async function evaluationPlan(options: {
  config: RunConfig;
  evaluation: EvaluationConfig;
  registry: ModelRegistry;
  /** The run's suite, read once by its session. */
  suite: LoadedSuite;
}): Promise<EvaluationPlan> {
  const { config, evaluation, registry } = options;
  const models = evaluatedModels(config, evaluation, registry);
  const comparisons = evaluation.comparisons ?? defaultComparisons(models);
  const names = new Set(models.map((model) => model.name));
  for (const comparison of comparisons) {
    for (const side of [comparison.candidate, comparison.baseline]) {
      if (!names.has(side)) {
        throw new UserError(
          `evaluation.comparisons: "${side}" is not a model of this evaluation; they are ${[...names].join(', ')}`,
        );
      }
    }
    if (comparison.candidate === comparison.baseline) {
      throw new UserError(`evaluation.comparisons: ${comparison.candidate} is compared with itself`);
    }
  }
  if (comparisons.length === 0 && evaluation.transfer.length === 0 && !judgesSearchesOnly(evaluation)) {
    throw new UserError(
      `evaluation: nothing to compare (models: ${[...names].join(', ') || 'none'}); an evaluation needs two models or more, a workflow transfer (evaluation.transfer), or comparisons: [] with searchCoverage`,
    );
  }
  const judges: EvaluationJudge[] = evaluation.judges.map((endpoint) => ({
    name: endpoint.name ?? endpoint.model,
    endpoint,
  }));
  const judgeNames = judges.map((judge) => judge.name);
  const reserved = judgeNames.find(
    (name) => name === 'oracle' || name === 'all judges' || name.startsWith('self:'),
  );
  if (reserved !== undefined) {
    throw new UserError(
      `evaluation.judges: "${reserved}" names a figure of its own (the oracle, the pooled judges, a self-judge); give that judge another name`,
    );
  }
  const repeated = judgeNames.find((name, index) => judgeNames.indexOf(name) !== index);
  if (repeated !== undefined) {
    throw new UserError(`evaluation.judges: two judges are named "${repeated}"; give each a name of its own`);
  }
  // A transfer-only evaluation (comparisons: []) runs on the tasks the searches covered, not on the test split.
  const tasks =
    comparisons.length > 0 || evaluation.tasks
      ? await evaluationTasks(options.suite, evaluation.tasks, evaluation.transfer.length > 0)
      : [];
  return { models, comparisons, tasks: comparisons.length > 0 ? tasks : [], judges };
}

/**
 * `comparisons: []` with no transfer and `searchCoverage` on: the evaluation judges the recorded searches alone, so it
 * runs no episode and serves no model (a run of `mass search` has no registered generation to serve).
 */
function judgesSearchesOnly(evaluation: EvaluationConfig): boolean {
  return (
    evaluation.comparisons?.length === 0 &&
    evaluation.transfer.length === 0 &&
    searchCoverageSettings(evaluation.searchCoverage, evaluation.judgeSeeds) !== null
  );
}

function evaluatedModels(
  config: RunConfig,
  evaluation: EvaluationConfig,
  registry: ModelRegistry,
): EvaluatedModel[] {
  if (judgesSearchesOnly(evaluation)) return [];
  if (evaluation.models) {
    return evaluation.models.map(({ name, endpoint }) => ({
      name,
      servedAs: endpoint.model,
      parent: null,
      endpoint,
    }));
  }
  // A transfer-only evaluation needs its executors alone: no other generation is served.
  const transferOnly = evaluation.comparisons?.length === 0 && evaluation.transfer.length > 0;
  const named =
    evaluation.generations ??
    (transferOnly ? [...new Set(evaluation.transfer.map((entry) => entry.executor))] : undefined);
  const generations = named ? named.map((name) => registry.require(name)) : registry.list();
  if (generations.length === 0) {
    throw new UserError(
      `${registry.file}: no generation is registered; run the loop first (mass rsi), or name the models to compare in evaluation.models`,
    );
  }
  return generationModels(config, generations);
}

/** Generations of the registry as models to serve: each on the executor's server, under the name it is served as. */
export function generationModels(
  config: RunConfig,
  generations: readonly ModelGeneration[],
): EvaluatedModel[] {
  const executor = config.roles.executor;
  return generations.map((generation) => ({
    name: generation.name,
    servedAs: generation.servedAs,
    parent: generation.parent,
    endpoint: { ...executor, model: generation.servedAs },
    generation,
  }));
}

/** Each model against the first, and against its parent when that is another model of the evaluation (`mass plan` too). */
export function defaultComparisons(
  models: ReadonlyArray<Pick<EvaluatedModel, 'name' | 'parent'>>,
): Array<{ candidate: string; baseline: string }> {
  const first = models[0]?.name;
  const names = new Set(models.map((model) => model.name));
  const comparisons: Array<{ candidate: string; baseline: string }> = [];
  const add = (candidate: string, baseline: string) => {
    if (!comparisons.some((known) => known.candidate === candidate && known.baseline === baseline)) {
      comparisons.push({ candidate, baseline });
    }
  };
  for (const model of models.slice(1)) add(model.name, first!);
  for (const model of models) {
    if (model.parent !== null && names.has(model.parent)) add(model.name, model.parent);
  }
  return comparisons;
}

async function evaluationTasks(
  suite: LoadedSuite,
  taskIds: readonly string[] | undefined,
  transfer: boolean,
): Promise<LoadedTask[]> {
  if (!taskIds) {
    const test = suite.tasks.filter((task) => task.manifest.split === 'test');
    if (test.length === 0) {
      throw new UserError(
        `suite ${suite.dir} has no test tasks: name the tasks to evaluate on in evaluation.tasks (or --tasks)` +
          (transfer ? ', or give evaluation.comparisons: [] for a workflow transfer alone' : ''),
      );
    }
    return test;
  }
  const known = new Map(suite.tasks.map((task) => [task.manifest.id, task]));
  const unknown = taskIds.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new UserError(
      `evaluation.tasks: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not in suite ${suite.dir}. Its tasks: ${[...known.keys()].join(', ')}`,
    );
  }
  return taskIds.map((id) => known.get(id)!);
}
