import { stat } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { SystemError, UserError } from '../errors.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { describeIssues } from '../store/describe-issues.js';
import { checkArgvTemplate, fillArgvTemplate } from './argv-template.js';
import { readDatasetFiles } from './dataset-files.js';
import { resolveHyperparameters } from './hyperparameters.js';
import { logTail, runLoggedProcess } from './logged-process.js';
import { checkInitAdapter, trainingWeightsOf, type Trainer, type TrainOptions } from './trainer.js';
import { emptyMetrics, TrainingMetrics, type TrainingResult } from '../records/training-metrics.js';

/** What a training command's argv (and output templates) may name. */
export const COMMAND_PLACEHOLDERS = [
  /** The training-data directory. */
  'dataset',
  /** `train.windows.jsonl`: tokenised windows with labels. */
  'train',
  'validation',
  /** `train.index.jsonl`: the windows' metadata, for a trainer with its own sampler. */
  'train_index',
  'validation_index',
  /** `train.conversations.jsonl`: TRL's `messages` + `tools` format. */
  'conversations',
  'validation_conversations',
  'out',
  /** The full weights the LoRA goes over: the parent's, or L0's when every generation is an adapter over it. */
  'base_model',
  /** The PEFT adapter to start from (the parent's, with `rsi.lineage: adapters`); empty for a fresh LoRA. */
  'init_adapter',
  'seed',
  /** `config.json` in `out`: weights, seed, every resolved hyperparameter and the adapter to start from. */
  'config',
  'steps',
  'batch_size',
  'learning_rate',
  'lora_rank',
  'lora_alpha',
  'lora_dropout',
] as const;

export interface CommandTrainerOptions {
  /** The program and its arguments, with placeholders (`{train}`, `{out}`…); run without a shell. */
  argv: string[];
  cwd?: string;
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /**
   * Where the command leaves its weights, as templates (`{out}/adapter`). Without either, the command must print a
   * JSON line `{"adapterPath": "...", "mergedPath": "...", "metrics": {...}}` (one path at least, relative paths
   * against `{out}`); the last such line counts.
   */
  adapterPath?: string;
  mergedPath?: string;
  /** Values written as `***` in the log (a hub token the command is given, say). */
  secrets?: string[];
}

const ResultLine = z
  .object({
    adapterPath: z.string().min(1).optional(),
    mergedPath: z.string().min(1).optional(),
    metrics: TrainingMetrics.partial().optional(),
  })
  .refine((line) => line.adapterPath !== undefined || line.mergedPath !== undefined, {
    message: 'name adapterPath or mergedPath',
  });
type ResultLine = z.infer<typeof ResultLine>;

export const COMMAND_TRAINER_FILES = { config: 'config.json', log: 'train.log' } as const;

/**
 * Any external trainer (Axolotl, LLaMA-Factory, TRL, Unsloth, a script of your own) as a command: the training data,
 * parent and recipe go in through placeholders, its output goes to `train.log`, and the weights it made come back
 * through a declared path or a printed JSON line.
 */
export function commandTrainer(options: CommandTrainerOptions): Trainer {
  const what = 'the training command';
  checkArgvTemplate(options.argv, COMMAND_PLACEHOLDERS, what);
  for (const [field, template] of [
    ['adapterPath', options.adapterPath],
    ['mergedPath', options.mergedPath],
  ] as const) {
    if (template !== undefined) checkArgvTemplate([template], COMMAND_PLACEHOLDERS, `${what}'s ${field}`);
  }

  return {
    kind: 'command',
    async train(train: TrainOptions): Promise<TrainingResult> {
      const dataset = await readDatasetFiles(train.dataset);
      const outDir = path.resolve(train.outDir);
      const hyper = resolveHyperparameters(train.hyper);
      const baseModel = trainingWeightsOf(train);
      const initAdapter = train.initAdapter === undefined ? null : await checkInitAdapter(train.initAdapter);
      if (
        initAdapter !== null &&
        !options.argv.some((argument) => /\{(config|init_adapter)\}/.test(argument))
      ) {
        throw new UserError(
          `${what} is to start from the adapter ${initAdapter}, but its argv names neither {init_adapter} nor ` +
            '{config} (whose initAdapter holds it): pass one of them to the command, which must load that adapter',
        );
      }
      const configFile = path.join(outDir, COMMAND_TRAINER_FILES.config);
      await writeFileAtomic(
        configFile,
        `${JSON.stringify({ parentModel: baseModel, seed: train.seed, hyper, initAdapter }, null, 2)}\n`,
      );
      const values: Record<(typeof COMMAND_PLACEHOLDERS)[number], string> = {
        dataset: dataset.directory,
        train: dataset.train.windows,
        validation: dataset.validation.windows,
        train_index: dataset.train.index,
        validation_index: dataset.validation.index,
        conversations: dataset.train.conversations,
        validation_conversations: dataset.validation.conversations,
        out: outDir,
        base_model: baseModel,
        init_adapter: initAdapter ?? '',
        seed: String(train.seed),
        config: configFile,
        steps: String(hyper.steps),
        batch_size: String(hyper.batchSize),
        learning_rate: String(hyper.learningRate),
        lora_rank: String(hyper.loraRank),
        lora_alpha: String(hyper.loraAlpha),
        lora_dropout: String(hyper.loraDropout),
      };
      const logFile = path.join(outDir, COMMAND_TRAINER_FILES.log);
      let printed: { line: string; number: number } | undefined;
      let lineNumber = 0;
      const outcome = await runLoggedProcess({
        argv: fillArgvTemplate(options.argv, values, what),
        label: what,
        logFile,
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        secrets: options.secrets,
        signal: train.signal,
        onStdoutLine: (line) => {
          lineNumber++;
          if (looksLikeResult(line)) printed = { line: line.trim(), number: lineNumber };
        },
      });
      if (outcome.exitCode !== 0) {
        const how =
          outcome.exitCode === null ? `was killed by ${outcome.signal}` : `exited with ${outcome.exitCode}`;
        throw new SystemError(`${what} ${how}; its log is ${logFile}, ending:\n${await logTail(logFile)}`);
      }

      const declared = options.adapterPath !== undefined || options.mergedPath !== undefined;
      let result: ResultLine;
      if (declared) {
        result = {
          adapterPath: options.adapterPath && fillArgvTemplate([options.adapterPath], values, what)[0],
          mergedPath: options.mergedPath && fillArgvTemplate([options.mergedPath], values, what)[0],
        };
      } else if (printed) {
        result = parseResultLine(printed.line, `${what}'s stdout line ${printed.number} (log: ${logFile})`);
      } else {
        throw new UserError(
          `${what} finished but did not say where its weights are: declare adapterPath or mergedPath (e.g. ` +
            `"{out}/adapter"), or have it print a JSON line {"adapterPath": "..."}; log: ${logFile}`,
        );
      }
      const resolveOut = (weights: string | undefined) =>
        weights === undefined ? undefined : path.resolve(outDir, weights);
      const adapterPath = resolveOut(result.adapterPath);
      const mergedPath = resolveOut(result.mergedPath);
      for (const weights of [adapterPath, mergedPath]) {
        if (weights !== undefined && !(await stat(weights).catch(() => undefined))) {
          throw new UserError(
            `${what} finished, but its weights ${weights} do not exist: check the output path it was given ` +
              `(log: ${logFile})`,
          );
        }
      }
      const metrics = { ...emptyMetrics(), ...result.metrics };
      const inOut = <T extends { path: string }>(checkpoint: T): T => ({
        ...checkpoint,
        path: path.resolve(outDir, checkpoint.path),
      });
      metrics.checkpoints = metrics.checkpoints.map(inOut);
      metrics.chosenCheckpoint = metrics.chosenCheckpoint && inOut(metrics.chosenCheckpoint);
      return { adapterPath, mergedPath, logFile, metrics };
    },
  };
}

function looksLikeResult(line: string): boolean {
  const text = line.trim();
  return text.startsWith('{') && (text.includes('"adapterPath"') || text.includes('"mergedPath"'));
}

function parseResultLine(line: string, source: string): ResultLine {
  let decoded: unknown;
  try {
    decoded = JSON.parse(line);
  } catch (error) {
    throw new UserError(`${source} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = ResultLine.safeParse(decoded);
  if (!parsed.success) {
    throw new UserError(`${source} is not a training result: ${describeIssues(parsed.error)}`);
  }
  return parsed.data;
}
