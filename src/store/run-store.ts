import { existsSync, mkdirSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { z } from 'zod';

import { UserError } from '../errors.js';
import type { ConfigDifference } from './config-differences.js';
import { openRunDatabase, type RunDatabase } from './database.js';
import { freezeConfig } from './frozen-config.js';
import { acquireRunLock, type RunLock } from './run-lock.js';
import { runFiles } from './run-paths.js';
import { StepRunner, type StepRecord } from './step.js';

export interface OpenRunOptions<Schema extends z.ZodType> {
  /** The folder holding every run, usually `runs`. */
  runsDirectory: string;
  /** Letters, digits, `.`, `_` and `-`; the run lives in `<runsDirectory>/<name>/`. */
  name: string;
  /** Validates `config` and the frozen `config.yaml`. */
  configSchema: Schema;
  /** Required to start a run. When resuming one, it must equal the frozen `config.yaml`. */
  config?: z.input<Schema>;
  /** Resume with a `config` that differs from the frozen one: it replaces `config.yaml`, the old file is kept beside it. */
  overrideConfig?: boolean;
  /** Shown to a second command that finds the run in use, e.g. `mass search`. */
  command?: string;
}

const runNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The run's own files; the names of everything in a run directory are in `run-paths.ts`. */
export const runFileNames = {
  config: runFiles.config,
  database: runFiles.database,
  lock: runFiles.lock,
} as const;

/** An open run directory (see ARCHITECTURE.md, "The run directory is the product"). Close it when done. */
export class Run<Config> {
  readonly name: string;
  readonly directory: string;
  /** The frozen configuration, as validated by the schema given to `openRun`. */
  readonly config: Config;
  /** What an `overrideConfig` changed in this opening; empty otherwise. */
  readonly configChanges: readonly ConfigDifference[];
  readonly database: RunDatabase;
  /** See `StepRunner.run`: runs `fn` unless the step is already done, redoing it if it was half done. */
  readonly step: StepRunner['run'];
  private readonly steps: StepRunner;
  private readonly lock: RunLock;

  constructor(fields: {
    name: string;
    directory: string;
    config: Config;
    configChanges: readonly ConfigDifference[];
    database: RunDatabase;
    lock: RunLock;
  }) {
    this.name = fields.name;
    this.directory = fields.directory;
    this.config = fields.config;
    this.configChanges = fields.configChanges;
    this.database = fields.database;
    this.lock = fields.lock;
    this.steps = new StepRunner(fields.database, fields.directory);
    this.step = this.steps.run.bind(this.steps);
  }

  /** A path inside the run directory, e.g. `run.path('episodes', id, 'episode.json')`. */
  path(...segments: string[]): string {
    const path = resolve(this.directory, ...segments);
    const inside = relative(this.directory, path);
    if (inside.startsWith('..') || isAbsolute(inside)) {
      throw new Error(`${segments.join('/')} is outside the run directory ${this.directory}`);
    }
    return path;
  }

  getStep(key: string): StepRecord | undefined {
    return this.steps.get(key);
  }

  listSteps(options: { prefix?: string } = {}): StepRecord[] {
    return this.steps.list(options);
  }

  /** Closes the index and frees the run for other commands; safe to call more than once. */
  close(): void {
    if (this.database.open) this.database.close();
    this.lock.release();
  }
}

/**
 * Opens `<runsDirectory>/<name>/`, starting the run when `config` is given and the run does not exist yet.
 * Takes the run lock first, so everything after it happens with this process as the only worker.
 */
export function openRun<Schema extends z.ZodType>(options: OpenRunOptions<Schema>): Run<z.output<Schema>> {
  const { name, configSchema, config } = options;
  if (!runNamePattern.test(name)) {
    throw new UserError(
      `"${name}" is not a valid run name: use letters, digits, ".", "_" and "-", starting with a letter or digit.`,
    );
  }
  const directory = resolve(options.runsDirectory, name);
  const configPath = join(directory, runFileNames.config);
  if (config === undefined && !existsSync(configPath)) {
    throw new UserError(
      `there is no run "${name}" in ${resolve(options.runsDirectory)} (no ${runFileNames.config}); ` +
        'check the name, or give a configuration to start it.',
    );
  }
  mkdirSync(directory, { recursive: true });
  const lock = acquireRunLock(join(directory, runFileNames.lock), { command: options.command });
  let database: RunDatabase | undefined;
  try {
    const frozen = freezeConfig({
      path: configPath,
      schema: configSchema,
      config,
      override: options.overrideConfig ?? false,
    });
    database = openRunDatabase(join(directory, runFileNames.database));
    return new Run({
      name,
      directory,
      config: frozen.config,
      configChanges: frozen.replaced,
      database,
      lock,
    });
  } catch (error) {
    database?.close();
    lock.release();
    throw error;
  }
}
