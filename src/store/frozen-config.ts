import { existsSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import type { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';
import { writeFileAtomicSync } from './atomic-write.js';
import { configDifferences, describeDifferences, type ConfigDifference } from './config-differences.js';
import { describeIssues } from './describe-issues.js';

/** Thrown when a run is resumed with a configuration other than the one it started with. */
export class ConfigMismatchError extends UserError {
  constructor(
    readonly path: string,
    readonly differences: readonly ConfigDifference[],
  ) {
    super(
      `${path}: this run started with a different configuration. ${describeDifferences(differences)}. ` +
        'Start a new run under another name, or explicitly override the frozen configuration to continue ' +
        'this run with the new one.',
    );
  }
}

interface FreezeConfigOptions<Schema extends z.ZodType> {
  /** Where the frozen copy lives: `runs/<name>/config.yaml`. */
  path: string;
  schema: Schema;
  /** The configuration of this invocation; absent when only opening an existing run. */
  config?: z.input<Schema>;
  /** Replace a differing frozen copy instead of refusing; the old file is kept beside it. */
  override?: boolean;
}

interface FrozenConfig<Config> {
  config: Config;
  /** Non-empty only when `override` replaced a differing frozen copy. */
  replaced: readonly ConfigDifference[];
}

/**
 * Writes `config.yaml` when the run starts; later, checks the configuration given against it. Both sides
 * are compared after validation (so a default added by a newer mass is not a difference) and after a YAML
 * round trip (so what is compared is what the file can hold).
 */
export function freezeConfig<Schema extends z.ZodType>(
  options: FreezeConfigOptions<Schema>,
): FrozenConfig<z.output<Schema>> {
  const { path, schema, config, override = false } = options;
  const frozen = existsSync(path) ? readFrozenConfig(path, schema) : undefined;
  if (config === undefined) {
    if (frozen === undefined)
      throw new UserError(`${path} is missing: give a configuration to start this run.`);
    return { config: frozen, replaced: [] };
  }
  const given = validate(schema, config, 'the configuration given');
  if (frozen === undefined) {
    writeFileAtomicSync(path, YAML.stringify(given));
    return { config: readFrozenConfig(path, schema), replaced: [] };
  }
  const differences = configDifferences(toPlainData(frozen), toPlainData(given));
  if (differences.length === 0) return { config: frozen, replaced: [] };
  if (differences.every((difference) => changesNothingDone(difference.field))) {
    // A budget raised (or lowered) to go on, or another notification command: the same run, its frozen copy brought
    // up to date.
    writeFileAtomicSync(path, YAML.stringify(given));
    return { config: readFrozenConfig(path, schema), replaced: [] };
  }
  if (!override) throw new ConfigMismatchError(path, differences);
  renameSync(path, join(dirname(path), `config.replaced-${fileTimestamp()}.yaml`));
  writeFileAtomicSync(path, YAML.stringify(given));
  return { config: readFrozenConfig(path, schema), replaced: differences };
}

/**
 * Fields a resumed run may change without becoming another run: what bounds its spending (`budgets.cost` and
 * `budgets.tokens`: a budget that ran out, raised to go on) and whom it tells of its events (`notify`). Neither
 * changes any work done or to do.
 */
function changesNothingDone(field: string): boolean {
  return /^budgets\.(cost|tokens)(\.|$)/.test(field) || /^notify(\.|$)/.test(field);
}

export function readFrozenConfig<Schema extends z.ZodType>(path: string, schema: Schema): z.output<Schema> {
  let decoded: unknown;
  try {
    decoded = YAML.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UserError(
      `${path} is corrupt: it is not valid YAML (${errorMessage(error)}). Repair it by hand; it must hold ` +
        'the configuration this run started with.',
      { cause: error },
    );
  }
  return validate(schema, decoded, path);
}

function validate<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  source: string,
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new UserError(`${source} is not a valid configuration: ${describeIssues(result.error)}.`);
  }
  return result.data;
}

function toPlainData(value: unknown): unknown {
  return YAML.parse(YAML.stringify(value));
}

function fileTimestamp(): string {
  return new Date().toISOString().replaceAll(':', '-');
}
