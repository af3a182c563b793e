import { stat } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { UserError } from '../errors.js';
import { defineRecord } from '../store/record.js';
import { runFiles } from '../store/run-paths.js';
import { ModelGeneration } from './model-generation.js';
import type { TrainingMetrics, TrainingResult } from './training-metrics.js';

/**
 * `train/registry.json`. Paths inside the run directory are kept relative to it (`./train/L1/merged`), so a run
 * directory can be moved; other paths are absolute; a base model given by id is kept as its id.
 */
const RegistryRecord = defineRecord({
  kind: 'model-registry',
  version: 1,
  schema: z.object({ generations: z.array(ModelGeneration) }),
});

export interface NewGeneration {
  name: string;
  /** `null` for the base. */
  parent: string | null;
  adapterPath?: string;
  /** The generation whose full weights the adapter applies to, when not the parent (`rsi.lineage: adapters`). */
  adapterBase?: string;
  mergedPath?: string;
  datasetId: string | null;
  metrics?: TrainingMetrics | null;
  servedAs: string;
  /** Default: now. */
  createdAt?: Date;
}

/**
 * The generations of a run (L0 the base, then L1, L2…) with their weights, data, metrics and served names. One
 * writer at a time (the run lock's holder); every change rewrites the file atomically.
 */
export class ModelRegistry {
  private constructor(
    readonly runDirectory: string,
    readonly file: string,
    private generations: ModelGeneration[],
  ) {}

  static async open(runDirectory: string): Promise<ModelRegistry> {
    const root = path.resolve(runDirectory);
    const file = path.join(root, runFiles.registry);
    const record = await RegistryRecord.readIfPresent(file);
    const registry = new ModelRegistry(root, file, []);
    registry.generations = (record?.generations ?? []).map((generation) => registry.resolved(generation));
    return registry;
  }

  /** Every generation in the order registered, paths absolute. */
  list(): ModelGeneration[] {
    return [...this.generations];
  }

  get(name: string): ModelGeneration | undefined {
    return this.generations.find((generation) => generation.name === name);
  }

  /** The named generation; an unknown name is an error that lists the known ones. */
  require(name: string): ModelGeneration {
    const generation = this.get(name);
    if (!generation) throw new UserError(`${this.file}: no generation ${name}; ${this.known()}`);
    return generation;
  }

  /** The last generation registered. */
  latest(): ModelGeneration | undefined {
    return this.generations.at(-1);
  }

  /** `L<k>`, k the number of generations so far: L0 for the base, then L1, L2… */
  nextName(): string {
    return `L${this.generations.length}`;
  }

  /** Registers the base model (no parent): a model directory or a model id the trainer and server resolve. */
  addBase(options: {
    name?: string;
    model: string;
    servedAs: string;
    createdAt?: Date;
  }): Promise<ModelGeneration> {
    return this.add({
      name: options.name ?? 'L0',
      parent: null,
      mergedPath: options.model,
      datasetId: null,
      servedAs: options.servedAs,
      createdAt: options.createdAt,
    });
  }

  /** Registers what a trainer made from `parent` on the dataset `datasetId`. */
  addTrained(options: {
    name: string;
    parent: string;
    datasetId: string;
    servedAs: string;
    result: TrainingResult;
    /** The generation whose full weights the adapter applies to, when not the parent. */
    adapterBase?: string;
    createdAt?: Date;
  }): Promise<ModelGeneration> {
    const { result, ...rest } = options;
    return this.add({
      ...rest,
      adapterPath: result.adapterPath,
      mergedPath: result.mergedPath,
      metrics: result.metrics,
    });
  }

  async add(generation: NewGeneration): Promise<ModelGeneration> {
    const where = `${this.file}: generation ${generation.name}`;
    if (this.get(generation.name)) {
      throw new UserError(`${where} is already registered; give the new generation another name`);
    }
    const sameName = this.generations.find((existing) => existing.servedAs === generation.servedAs);
    if (sameName) {
      throw new UserError(
        `${where}: the served name "${generation.servedAs}" is already generation ${sameName.name}'s; ` +
          'each generation needs its own',
      );
    }
    if (generation.parent !== null && !this.get(generation.parent)) {
      throw new UserError(`${where}: unknown parent ${generation.parent}; ${this.known()}`);
    }
    if (generation.parent === null && (generation.mergedPath === undefined || generation.adapterPath)) {
      throw new UserError(`${where}: a base generation (no parent) is a full model: give mergedPath only`);
    }
    if (generation.adapterBase !== undefined) {
      const base = this.get(generation.adapterBase);
      if (generation.adapterPath === undefined) {
        throw new UserError(
          `${where}: adapterBase ${generation.adapterBase} is given, but it has no adapter`,
        );
      }
      if (!base)
        throw new UserError(`${where}: unknown adapterBase ${generation.adapterBase}; ${this.known()}`);
      if (base.mergedPath === undefined) {
        throw new UserError(
          `${where}: its adapter is over ${base.name}'s full weights, but ${base.name} has only an adapter`,
        );
      }
    }
    const entry = ModelGeneration.safeParse({
      name: generation.name,
      parent: generation.parent,
      adapterPath: generation.adapterPath && (await this.weightsPath(generation.adapterPath, where, true)),
      adapterBase: generation.adapterBase,
      mergedPath:
        generation.mergedPath &&
        (await this.weightsPath(generation.mergedPath, where, generation.parent !== null)),
      datasetId: generation.datasetId,
      metrics: generation.metrics ?? null,
      servedAs: generation.servedAs,
      createdAt: (generation.createdAt ?? new Date()).toISOString(),
    });
    if (!entry.success) {
      throw new UserError(`${where}: ${entry.error.issues.map((issue) => issue.message).join('; ')}`);
    }
    const generations = [...this.generations, entry.data];
    await RegistryRecord.write(this.file, {
      generations: generations.map((stored) => this.stored(stored)),
    });
    this.generations = generations;
    return entry.data;
  }

  /** Records a passed deployment check on the generation (the registry's copy of its figures). */
  async recordDeploymentCheck(
    name: string,
    check: NonNullable<ModelGeneration['deploymentCheck']>,
  ): Promise<void> {
    this.require(name);
    const generations = this.generations.map((generation) =>
      generation.name === name ? { ...generation, deploymentCheck: check } : generation,
    );
    await RegistryRecord.write(this.file, {
      generations: generations.map((stored) => this.stored(stored)),
    });
    this.generations = generations;
  }

  /** Checks that the generation's weights are still on disk (a base given by model id is not checked). */
  async checkFiles(name: string): Promise<ModelGeneration> {
    const generation = this.require(name);
    for (const weights of [generation.adapterPath, generation.mergedPath]) {
      if (
        weights !== undefined &&
        path.isAbsolute(weights) &&
        !(await stat(weights).catch(() => undefined))
      ) {
        throw new UserError(
          `${this.file}: generation ${name}'s weights ${weights} are missing; restore them or train ${name} again`,
        );
      }
    }
    return generation;
  }

  /**
   * An absolute path for weights that must exist; a base model may instead be a model id (nothing by that name
   * here), kept as it is.
   */
  private async weightsPath(weights: string, where: string, mustExist: boolean): Promise<string> {
    const absolute = path.resolve(weights);
    if (await stat(absolute).catch(() => undefined)) return absolute;
    if (!mustExist && !path.isAbsolute(weights) && !weights.startsWith('.')) return weights;
    throw new UserError(
      `${where}: its weights ${absolute} do not exist; a generation is registered with its files`,
    );
  }

  private known(): string {
    const names = this.generations.map((generation) => generation.name);
    return names.length === 0 ? 'none is registered yet' : `registered: ${names.join(', ')}`;
  }

  private stored(generation: ModelGeneration): ModelGeneration {
    const relative = (weights: string | undefined) => {
      if (weights === undefined || !path.isAbsolute(weights)) return weights;
      const inside = path.relative(this.runDirectory, weights);
      return inside.startsWith('..') || path.isAbsolute(inside) ? weights : `./${inside}`;
    };
    return {
      ...generation,
      adapterPath: relative(generation.adapterPath),
      mergedPath: relative(generation.mergedPath),
    };
  }

  private resolved(generation: ModelGeneration): ModelGeneration {
    const absolute = (weights: string | undefined) =>
      weights?.startsWith('./') ? path.join(this.runDirectory, weights) : weights;
    return {
      ...generation,
      adapterPath: absolute(generation.adapterPath),
      mergedPath: absolute(generation.mergedPath),
    };
  }
}
