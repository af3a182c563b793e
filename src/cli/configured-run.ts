import { dirname, resolve } from 'node:path';

import { loadRunConfig, parseRunConfig, RunConfig } from '../config/run-config.js';
import { checkServersBeforeRun, type PreStartOptions } from '../doctor/pre-start.js';
import { modelKind } from '../hosting/model-kind.js';
import { openRun, type Run } from '../store/run-store.js';

export interface ConfiguredRunOptions {
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
}

export interface ConfiguredRun {
  run: Run<RunConfig>;
  /** The suite folder: a relative `suite` is read from the configuration file's folder. */
  suiteDir: string;
}

/** Reads a run configuration and opens (or resumes) its run directory. */
export async function openConfiguredRun(options: ConfiguredRunOptions): Promise<ConfiguredRun> {
  const loaded = await loadRunConfig(options.configFile);
  const config = parseRunConfig(options.adjust ? options.adjust(loaded) : loaded, options.configFile);
  // What the model's kind cannot honour is refused naming the file, before the run directory is touched.
  modelKind(config, options.configFile);
  const { serverChecks } = options;
  if (serverChecks && !serverChecks.skip) {
    await checkServersBeforeRun(config, { ...serverChecks, command: options.command });
  }
  const run = openRun({
    runsDirectory: options.runsDirectory ?? 'runs',
    name: config.name,
    configSchema: RunConfig,
    config,
    overrideConfig: options.overrideConfig,
    command: options.command,
  });
  return { run, suiteDir: resolve(dirname(resolve(options.configFile)), run.config.suite) };
}
