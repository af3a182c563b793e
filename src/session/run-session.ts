import { dirname, resolve } from 'node:path';

import { dataSeeds } from '../config/data-seeds.js';
import { outageSettings } from '../config/fault-tolerance.js';
import { loadRunConfig, parseRunConfig, RunConfig } from '../config/run-config.js';
import { checkServersBeforeRun, type PreStartOptions } from '../doctor/pre-start.js';
import { modelKind, type ModelKind } from '../hosting/model-kind.js';
import { loadTokenCounter, type TokenCounter } from '../model/token-counter.js';
import { episodeBackendFor } from '../queue/backend-from-config.js';
import type { EpisodeBackend } from '../queue/episode-backend.js';
import { searchTaskDirs } from '../search/search-config.js';
import { openRun, type Run } from '../store/run-store.js';
import { loadSuite, type LoadedSuite } from '../tasks/load-suite.js';
import type { ServedGeneration } from '../train/model-host.js';
import { ModelRegistry } from '../records/registry.js';
import { EndpointPools } from './endpoint-pools.js';
import { prepareStage, stageTokenizer, type PreparedStage } from './prepare-stage.js';
import type { TrainingTokenizer } from './training-tokenizer.js';

/** A configuration read from its file, parsed once, and its model's kind, checked against it naming the file. */
export interface ConfiguredModel {
  config: RunConfig;
  kind: ModelKind;
}

/**
 * The one reader of the configuration's model kind: parses nothing, refuses (naming `source`) the settings the kind
 * cannot honour, and returns what the kind decides (the host serving generations, the trainer, the tokenizer rule).
 */
export function configuredModel(config: RunConfig, source?: string): ConfiguredModel {
  return { config, kind: modelKind(config, source) };
}

/** Reads a run configuration file, parses it once (the command line's changes applied) and checks its model kind. */
export async function loadConfiguredModel(
  configFile: string,
  adjust?: (config: RunConfig) => RunConfig,
): Promise<ConfiguredModel> {
  const loaded = await loadRunConfig(configFile);
  // The command line's changes are validated as the file's own fields are.
  return configuredModel(adjust ? parseRunConfig(adjust(loaded), configFile) : loaded, configFile);
}

/**
 * What every command that works in a run shares, opened once per command: the run directory, its configuration
 * (parsed once), the suite (read once), the model's kind, the registry of generations, the episode back-end, the
 * token counter, and each stage's served generation with its roles' models. Stages take the session and their own
 * options. Closing it closes the back-end and the run.
 */
export class RunSession {
  private suiteRead?: Promise<LoadedSuite>;
  private taskDirsRead?: Promise<string[]>;
  private registryOpened?: Promise<ModelRegistry>;
  private counter?: Promise<TokenCounter>;
  private backend?: EpisodeBackend;

  constructor(
    readonly run: Run<RunConfig>,
    /** The suite folder: a relative `suite` is read from the configuration file's folder. */
    readonly suiteDir: string,
    readonly kind: ModelKind,
    /** Makes the episode back-end; default the configuration's `execution` for this run's directory. */
    private readonly makeBackend: (
      config: RunConfig,
      runDirectory: string,
    ) => EpisodeBackend = episodeBackendFor,
  ) {}

  get config(): RunConfig {
    return this.run.config;
  }

  /** The suite, read once. */
  suite(): Promise<LoadedSuite> {
    return (this.suiteRead ??= loadSuite(this.suiteDir));
  }

  /** The task folders the loop works on (`tasks`, else every train task), data seeds checked; read once. */
  taskDirs(): Promise<string[]> {
    return (this.taskDirsRead ??= searchTaskDirs(this.suiteDir, this.config.tasks, dataSeeds(this.config)));
  }

  /** The run's registry of generations, opened once. */
  registry(): Promise<ModelRegistry> {
    return (this.registryOpened ??= ModelRegistry.open(this.run.directory));
  }

  /** Counts tokens with the default tokenizer (Qwen3's), loaded once; a stage counts with its generation's own. */
  tokenCounter(): Promise<TokenCounter> {
    return (this.counter ??= loadTokenCounter());
  }

  /** Where episodes run: the configuration's `execution` back-end, made at first use, closed with the session. */
  get episodes(): EpisodeBackend {
    return (this.backend ??= this.makeBackend(this.config, this.run.directory));
  }

  /** Pools per model server for a stage (outage gates, slots), recording lost work to `outageLog`. */
  endpointPools(outageLog?: string): EndpointPools {
    return new EndpointPools(outageSettings(this.config), outageLog);
  }

  /**
   * The model provider of one stage: `generation` served (by default the way the loop serves it, deployed from the
   * registry; `base`: the configuration's own model), its token counter, the budgets fitted to the served context
   * and the roles' models. The caller closes `served`.
   */
  async stage(options: {
    generation: string;
    taskDirs: readonly string[];
    makesTrainingData: boolean;
    serve?: 'base' | 'deploy';
  }): Promise<PreparedStage> {
    const registry = await this.registry();
    const { host } = this.kind;
    return prepareStage({
      config: this.config,
      kind: this.kind,
      registry,
      generation: options.generation,
      taskDirs: options.taskDirs,
      makesTrainingData: options.makesTrainingData,
      serve: (): Promise<ServedGeneration> =>
        options.serve === 'base'
          ? host.serveBase()
          : host.serve(registry.require(options.generation), registry, this.run.directory),
    });
  }

  /** The tokenizer of a generation's data; refused, when the stage makes training data, if it cannot be the model's. */
  async tokenizer(generation: string, makesTrainingData: boolean): Promise<TrainingTokenizer> {
    return stageTokenizer({
      config: this.config,
      kind: this.kind,
      registry: await this.registry(),
      generation,
      makesTrainingData,
    });
  }

  async close(): Promise<void> {
    try {
      await this.backend?.close();
    } finally {
      this.backend = undefined;
      this.run.close();
    }
  }
}

/**
 * A session over a run already open (`suiteDir` resolved), its model kind checked naming `source`; `backend` makes
 * its episode back-end another way than from the run's own configuration and directory.
 */
export function runSession(
  run: Run<RunConfig>,
  suiteDir: string,
  options: { source?: string; backend?: (config: RunConfig, runDirectory: string) => EpisodeBackend } = {},
): RunSession {
  return new RunSession(run, suiteDir, configuredModel(run.config, options.source).kind, options.backend);
}

export interface OpenRunSessionOptions {
  configFile: string;
  /** The folder holding runs (default `runs`); the run is `<runs>/<config name>/`. */
  runsDirectory?: string;
  /** Changes the command line makes to the file's configuration, before it is frozen or compared. */
  adjust?: (config: RunConfig) => RunConfig;
  overrideConfig?: boolean;
  command: string;
  /**
   * The model server checks to run before the run directory is opened (`src/doctor/pre-start.ts`); `skip`:
   * `--skip-doctor`. Without them, none run.
   */
  serverChecks?: Omit<PreStartOptions, 'command' | 'log'> & { skip?: boolean };
  /** Opens the run another way than `openRun` does (`mass eval` compares all but its evaluation section). */
  open?: (config: RunConfig, runsDirectory: string) => Run<RunConfig>;
}

/**
 * Reads a run configuration (once) and opens (or resumes) its run directory as a session. What the model's kind
 * cannot honour is refused naming the file, and the servers are checked, before the run directory is touched.
 */
export async function openRunSession(options: OpenRunSessionOptions): Promise<RunSession> {
  const { config, kind } = await loadConfiguredModel(options.configFile, options.adjust);
  const { serverChecks } = options;
  if (serverChecks && !serverChecks.skip) {
    await checkServersBeforeRun(config, { ...serverChecks, command: options.command });
  }
  const runsDirectory = options.runsDirectory ?? 'runs';
  const run = options.open
    ? options.open(config, runsDirectory)
    : openRun({
        runsDirectory,
        name: config.name,
        configSchema: RunConfig,
        config,
        overrideConfig: options.overrideConfig,
        command: options.command,
      });
  return new RunSession(run, resolve(dirname(resolve(options.configFile)), run.config.suite), kind);
}
