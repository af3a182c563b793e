import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import {
  SCHEMA_CHECKS_RECORD_VARIABLE,
  SCHEMA_CHECKS_VARIABLE,
  schemaValidatorChunkPath,
  writeSchemaCheckPreload,
} from '../../src/harness/schema-check-cache.js';
import { temporaryDirectory } from '../support/fixtures.js';

type Check = (schema: unknown) => string | null;
interface ValidatorChunk {
  SchemaValidator: { compileStrict: Check };
}

/** A tool's parameter schema as qwen-code builds it: a new object for every request. */
const toolSchema = () => ({
  type: 'object',
  properties: { command: { type: 'string', description: 'The shell command.' } },
  required: ['command'],
});

describe("the harness's schema-check cache (qwen-code loaded in this process, as the preload loads it)", () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());

  it('answers each schema as qwen-code does, and checks a schema of the same content only once', async () => {
    const chunk = (await import(pathToFileURL(schemaValidatorChunkPath()).href)) as ValidatorChunk;
    const shipped = chunk.SchemaValidator.compileStrict;
    const misspelt = { type: 'object', properties: { path: { type: 'string', descripton: 'typo' } } };
    const expected = { valid: shipped(toolSchema()), misspelt: shipped(misspelt) };
    expect(expected.valid).toBeNull();
    expect(expected.misspelt).toMatch(/unknown keyword: "descripton"/);

    // qwen-code's own check, counted; the preload then wraps it.
    let checks = 0;
    chunk.SchemaValidator.compileStrict = (schema) => {
      checks += 1;
      return shipped(schema);
    };
    const [entry, options] = [process.argv[1], process.env.NODE_OPTIONS];
    try {
      // The preload acts only in the harness proper, qwen-code's cli.js.
      process.argv[1] = '/opt/qwen-code/cli.js';
      process.env.NODE_OPTIONS = '--import something';
      await import(pathToFileURL(writeSchemaCheckPreload(directory.path)).href);
      // Not passed on to the agents' shells, in every profile (the agent tool's preload runs only in lean).
      expect(process.env.NODE_OPTIONS).toBeUndefined();
      const check = chunk.SchemaValidator.compileStrict;
      for (let request = 0; request < 3; request += 1) {
        expect(check(toolSchema())).toBe(expected.valid);
        expect(check(structuredClone(misspelt))).toBe(expected.misspelt);
      }
      expect(checks).toBe(2);
      // Another content is another check.
      expect(check({ ...toolSchema(), required: [] })).toBeNull();
      expect(checks).toBe(3);
    } finally {
      process.argv[1] = entry!;
      if (options === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = options;
      chunk.SchemaValidator.compileStrict = shipped;
    }
  });

  it('starts from the answers it is given, and records every answer where it is asked to', async () => {
    const chunk = (await import(pathToFileURL(schemaValidatorChunkPath()).href)) as ValidatorChunk;
    const shipped = chunk.SchemaValidator.compileStrict;
    let checks = 0;
    chunk.SchemaValidator.compileStrict = (schema) => {
      checks += 1;
      return shipped(schema);
    };
    // An answer qwen-code would never give, so that using it shows.
    const known = join(directory.path, 'known.json');
    writeFileSync(known, JSON.stringify({ [JSON.stringify(toolSchema())]: 'from the warm run', other: 3 }));
    const recorded = join(directory.path, 'recorded.json');
    const entry = process.argv[1];
    const given = { ...process.env };
    try {
      process.argv[1] = '/opt/qwen-code/cli.js';
      process.env[SCHEMA_CHECKS_VARIABLE] = known;
      process.env[SCHEMA_CHECKS_RECORD_VARIABLE] = recorded;
      await import(pathToFileURL(writeSchemaCheckPreload(mkdtempSync(join(directory.path, 'again-')))).href);
      // Not passed on to the harness's shells.
      expect(process.env[SCHEMA_CHECKS_VARIABLE]).toBeUndefined();
      expect(process.env[SCHEMA_CHECKS_RECORD_VARIABLE]).toBeUndefined();
      const check = chunk.SchemaValidator.compileStrict;
      expect(check(toolSchema())).toBe('from the warm run');
      expect(checks).toBe(0);
      expect(check({ type: 'string' })).toBeNull();
      expect(checks).toBe(1);
      expect(JSON.parse(readFileSync(recorded, 'utf8'))).toEqual({
        [JSON.stringify(toolSchema())]: 'from the warm run',
        '{"type":"string"}': null,
      });
    } finally {
      process.argv[1] = entry!;
      for (const name of [SCHEMA_CHECKS_VARIABLE, SCHEMA_CHECKS_RECORD_VARIABLE]) {
        if (given[name] === undefined) delete process.env[name];
        else process.env[name] = given[name];
      }
      chunk.SchemaValidator.compileStrict = shipped;
    }
  });
});
