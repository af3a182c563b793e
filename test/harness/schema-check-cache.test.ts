import { pathToFileURL } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { schemaValidatorChunkPath, writeSchemaCheckPreload } from '../../src/harness/schema-check-cache.js';
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
    const entry = process.argv[1];
    try {
      // The preload acts only in the harness proper, qwen-code's cli.js.
      process.argv[1] = '/opt/qwen-code/cli.js';
      await import(pathToFileURL(writeSchemaCheckPreload(directory.path)).href);
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
      chunk.SchemaValidator.compileStrict = shipped;
    }
  });
});
