import { isUnaddressed, type Endpoint } from '../config/endpoint.js';
import type { RunConfig } from '../config/run-config.js';
import { deploySetting, trainerSetting, type TrainerSetting } from '../config/rsi-settings.js';
import { UserError } from '../errors.js';
import { toyHost } from '../toy/toy-host.js';
import { toyTrainer } from '../toy/train-toy-model.js';
import { commandTrainer } from '../train/command-trainer.js';
import { pythonTrainer } from '../train/python-trainer.js';
import type { Trainer } from '../train/trainer.js';
import type { ModelHost, ServedGeneration } from '../train/model-host.js';
import { servedHost } from './served-host.js';

/** What the configuration's model kind (`model.kind`) decides: where generations answer, who trains them. */
export interface ModelKind {
  host: ModelHost;
  /** The trainer of the next generation. */
  trainer(): Trainer;
  /** Training data may be tokenised with a tokenizer not known to be the model's (the toy model reads text). */
  anyTokenizer: boolean;
  /** Trained generations are deployed as adapters loaded into the running server (`rsi.deploy` lora). */
  runtimeLora: boolean;
  /** The configuration's own model served for `mass doctor`'s checks, as it answers without injected faults. */
  serveForChecks(): Promise<ServedGeneration>;
}

/**
 * Whether the model is the built-in toy, for figures made before a run: it answers in this process at once and trains
 * itself with one step on the CPU, so its time is the harness's and the sandbox's, not tokens over a throughput.
 */
export function isBuiltInToy(config: RunConfig): boolean {
  return config.model.kind === 'toy';
}

/**
 * The one place that switches on the model's kind: a served model (vLLM or another OpenAI-compatible server, trained
 * by `rsi.trainer`, deployed by `rsi.deploy`) or the built-in toy model (served in this process, training itself).
 * Refuses a configuration whose settings the kind cannot honour, every problem on its own line.
 */
export function modelKind(config: RunConfig, source = 'the run configuration'): ModelKind {
  const problems = kindProblems(config);
  if (problems.length > 0) {
    throw new UserError(
      `the configuration is not valid:\n  ${problems.map((problem) => `${source}: ${problem}`).join('\n  ')}`,
    );
  }
  const { model } = config;
  switch (model.kind) {
    case 'toy':
      return {
        host: toyHost(config, model.faults),
        trainer: toyTrainer,
        anyTokenizer: true,
        runtimeLora: false,
        serveForChecks: () => toyHost(config, undefined).serveBase(),
      };
    case 'served': {
      const host = servedHost(config);
      return {
        host,
        trainer: () => configuredTrainer(config),
        anyTokenizer: false,
        runtimeLora: deploySetting(config.rsi).kind === 'lora',
        serveForChecks: () => host.serveBase(),
      };
    }
  }
}

function configuredTrainer(config: RunConfig): Trainer {
  return trainerFromSetting(trainerSetting(config.rsi));
}

/** The trainer an `rsi.trainer` setting names (`mass rsi`, and `mass train --config`). */
export function trainerFromSetting(trainer: TrainerSetting): Trainer {
  switch (trainer.kind) {
    case 'python':
      return pythonTrainer({
        python: trainer.python,
        script: trainer.script,
        env: trainer.env,
        launch: trainer.launch,
      });
    case 'command':
      return commandTrainer({
        argv: trainer.argv,
        cwd: trainer.cwd,
        env: trainer.env,
        adapterPath: trainer.adapterPath,
        mergedPath: trainer.mergedPath,
      });
  }
}

/** `field: message` for each setting the model's kind cannot honour. */
function kindProblems(config: RunConfig): string[] {
  const problems: string[] = [];
  if (config.model.kind === 'toy') {
    if (config.roles.executor.baseUrl !== undefined) {
      problems.push(
        'roles.executor.baseUrl: model.kind toy is served by mass itself, on an address of its own: remove baseUrl',
      );
    }
    for (const setting of ['trainer', 'deploy'] as const) {
      if (config.rsi[setting] !== undefined) {
        problems.push(
          `rsi.${setting}: model.kind toy is ${setting === 'trainer' ? 'trained' : 'served'} by mass itself: remove rsi.${setting}`,
        );
      }
    }
    if (config.rsi.lineage === 'adapters') {
      problems.push(
        'rsi.lineage: model.kind toy trains full weights, not adapters: remove rsi.lineage (or set it to merged)',
      );
    }
    if (config.execution?.backend === 'queue') {
      problems.push(
        'execution.backend: model.kind toy is served inside this process on a loopback port, which a mass worker on another machine cannot reach: use execution.backend local, or serve a model the workers can reach (model.kind served, with roles.executor.baseUrl)',
      );
    }
  } else {
    for (const field of unaddressedEndpoints(config)) {
      problems.push(
        `${field}.baseUrl: an OpenAI-compatible server needs its address, e.g. baseUrl: http://127.0.0.1:8000/v1 (or model: { kind: toy } for the built-in toy model)`,
      );
    }
  }
  return problems;
}

/** The configuration's endpoints on an OpenAI-compatible server that give no address, by field. */
function unaddressedEndpoints(config: RunConfig): string[] {
  const endpoints: Array<[string, Endpoint | undefined]> = [
    ['roles.executor', config.roles.executor],
    ['roles.judge', config.roles.judge],
    ['roles.optimizer', config.roles.optimizer],
    ...(config.evaluation?.judges ?? []).map((judge, index): [string, Endpoint] => [
      `evaluation.judges.${index}`,
      judge,
    ]),
    ...(config.evaluation?.models ?? []).map((model, index): [string, Endpoint] => [
      `evaluation.models.${index}.endpoint`,
      model.endpoint,
    ]),
  ];
  return endpoints
    .filter(([, endpoint]) => endpoint !== undefined && isUnaddressed(endpoint))
    .map(([field]) => field);
}
