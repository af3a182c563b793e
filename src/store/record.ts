import { readFile } from 'node:fs/promises';
import { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';
import { writeFileAtomic } from './atomic-write.js';
import { describeIssues } from './describe-issues.js';
import { systemErrorCode } from './system-error-code.js';

export interface RecordDefinitionOptions<Schema extends z.ZodObject> {
  /** What the file holds (`episode`, `verdict`); a file of another kind is refused. */
  kind: string;
  /** The version this code writes. Bump it when old files no longer satisfy the schema, and add `migrate`. */
  version: number;
  /** The body of the record; `schemaVersion` and `kind` are added around it and must not be fields of it. */
  schema: Schema;
  /** Turns the body of a record written at an older `fromVersion` into input for the current schema. */
  migrate?: (body: Record<string, unknown>, fromVersion: number) => unknown;
}

export interface RecordDefinition<Schema extends z.ZodObject> {
  readonly kind: string;
  readonly version: number;
  readonly schema: Schema;
  /** Validates an already-decoded record; `source` names where it came from in error messages. */
  parse(value: unknown, source: string): z.output<Schema>;
  read(path: string): Promise<z.output<Schema>>;
  /** Like `read`, but a missing file is `undefined` rather than an error. */
  readIfPresent(path: string): Promise<z.output<Schema> | undefined>;
  /** Validates, then writes atomically as pretty JSON led by `schemaVersion` and `kind`. */
  write(path: string, value: z.input<Schema>): Promise<void>;
  serialize(value: z.input<Schema>): string;
}

const redoAdvice = 'Delete it and run the command again: the step that wrote it will be redone.';
const EncodedObject = z.record(z.string(), z.unknown());
const SchemaVersion = z.number().int().positive();

export function defineRecord<Schema extends z.ZodObject>(
  options: RecordDefinitionOptions<Schema>,
): RecordDefinition<Schema> {
  const { kind, version, schema, migrate } = options;
  for (const reserved of ['schemaVersion', 'kind']) {
    if (reserved in schema.shape) {
      throw new Error(`record "${kind}": the schema must not define "${reserved}", defineRecord adds it`);
    }
  }

  function parse(value: unknown, source: string): z.output<Schema> {
    const object = EncodedObject.safeParse(value);
    if (!object.success) {
      throw new UserError(`${source} is not a "${kind}" record: expected a JSON object. ${redoAdvice}`);
    }
    const { schemaVersion, kind: storedKind, ...body } = object.data;
    if (schemaVersion === undefined) {
      throw new UserError(
        `${source} has no schemaVersion, so it is not a record written by mass (or it was damaged). ${redoAdvice}`,
      );
    }
    const storedVersion = SchemaVersion.safeParse(schemaVersion);
    if (!storedVersion.success) {
      throw new UserError(
        `${source} has an invalid schemaVersion ${JSON.stringify(schemaVersion)} (expected a positive integer). ${redoAdvice}`,
      );
    }
    if (storedKind !== kind) {
      throw new UserError(
        `${source} holds a ${JSON.stringify(storedKind ?? null)} record where a "${kind}" record was expected; ` +
          `it was put there by mistake or damaged. ${redoAdvice}`,
      );
    }
    if (storedVersion.data > version) {
      throw new UserError(
        `${source} was written by a newer mass: schemaVersion ${storedVersion.data}, ` +
          `this version reads up to ${version}; upgrade mass.`,
      );
    }
    const currentBody = storedVersion.data < version ? migrateBody(body, storedVersion.data, source) : body;
    const result = schema.safeParse(currentBody);
    if (!result.success) {
      throw new UserError(
        `${source} is not a valid "${kind}" record: ${describeIssues(result.error)}. ${redoAdvice}`,
      );
    }
    return result.data;
  }

  function migrateBody(body: Record<string, unknown>, fromVersion: number, source: string): unknown {
    if (migrate === undefined) {
      throw new UserError(
        `${source} was written by an older mass (schemaVersion ${fromVersion}); this version reads ` +
          `schemaVersion ${version} and cannot convert it. ${redoAdvice}`,
      );
    }
    try {
      return migrate(body, fromVersion);
    } catch (error) {
      throw new UserError(
        `${source}: could not convert a "${kind}" record from schemaVersion ${fromVersion} to ${version}: ` +
          `${errorMessage(error)}. ${redoAdvice}`,
        { cause: error },
      );
    }
  }

  async function readIfPresent(path: string): Promise<z.output<Schema> | undefined> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (systemErrorCode(error) === 'ENOENT') return undefined;
      throw error;
    }
    let decoded: unknown;
    try {
      decoded = JSON.parse(text);
    } catch (error) {
      throw new UserError(
        `${path} is corrupt: it is not valid JSON (${errorMessage(error)}). ${redoAdvice}`,
        {
          cause: error,
        },
      );
    }
    return parse(decoded, path);
  }

  async function read(path: string): Promise<z.output<Schema>> {
    const record = await readIfPresent(path);
    if (record === undefined) {
      throw new UserError(
        `${path} is missing: expected a "${kind}" record there. Run the command again to redo it.`,
      );
    }
    return record;
  }

  function serialize(value: z.input<Schema>): string {
    const result = schema.safeParse(value);
    if (!result.success) {
      // The caller built the value, so this is a bug in mass, not something the user can fix.
      throw new Error(`refusing to write an invalid "${kind}" record: ${describeIssues(result.error)}`);
    }
    return `${JSON.stringify({ schemaVersion: version, kind, ...result.data }, null, 2)}\n`;
  }

  async function write(path: string, value: z.input<Schema>): Promise<void> {
    await writeFileAtomic(path, serialize(value));
  }

  return { kind, version, schema, parse, read, readIfPresent, write, serialize };
}
