import { pathToFileURL } from 'node:url';

import { qwenCodeChunkPath, writeHarnessPreload } from './harness-preload.js';
import { QWEN_CODE_VERSION } from './qwen-code.js';

/**
 * qwen-code 0.24.4 checks every tool's parameter schema before each model call (`SchemaValidator.compileStrict`,
 * to decide how to declare the tool): each check builds a new Ajv and compiles the JSON Schema meta-schema with it.
 * Its own cache is keyed by the schema object, which the harness builds anew for every request, so a toy episode of
 * 9 model calls spent about 1.4 of its 8 busy seconds on these checks (a CPU profile of the harness). The check is a
 * pure function of the schema's content, so this preload, passed with `--import` in NODE_OPTIONS like the agent tool's,
 * keeps each answer by the schema's JSON text. The requests the harness sends are the same byte for byte.
 *
 * The answers also outlive the process: the trusted warm run of the compile cache (`harness-node.ts`) records its own
 * (`SCHEMA_CHECKS_RECORD_VARIABLE`) beside the cache, and every episode's harness starts from them
 * (`SCHEMA_CHECKS_VARIABLE`), read-only like the cache itself, so that most checks are never made in an episode.
 */

/** The chunk of qwen-code 0.24.4 that exports `SchemaValidator`. */
const VALIDATOR_CHUNK = 'chunks/chunk-FM3J33MR.js';

export const SCHEMA_CHECK_PRELOAD_FILE_NAME = 'schema-check-cache.mjs';
/** The answers the harness starts from: a JSON object from schema text to answer (null, or the error). */
export const SCHEMA_CHECKS_VARIABLE = 'MASS_SCHEMA_CHECKS';
/** Where the harness writes its answers, each time it has a new one (the warm run only). */
export const SCHEMA_CHECKS_RECORD_VARIABLE = 'MASS_SCHEMA_CHECKS_RECORD';

/** The host path of qwen-code's chunk that defines `SchemaValidator` (inside the sandbox it is at the same path). */
export function schemaValidatorChunkPath(): string {
  return qwenCodeChunkPath(VALIDATOR_CHUNK);
}

/** The preload's source, importing qwen-code's chunk from `chunkPath`. */
export function schemaCheckPreloadSource(chunkPath: string): string {
  return `// Written by mass (src/harness/schema-check-cache.ts) for qwen-code ${QWEN_CODE_VERSION}: acts in the harness
// proper (cli.js) alone, and keeps NODE_OPTIONS, which brought it, from the agents' shells.
if (/\\/cli\\.js$/.test(process.argv[1] ?? '')) {
  delete process.env.NODE_OPTIONS;
  const { SchemaValidator } = await import(${JSON.stringify(pathToFileURL(chunkPath).href)});
  if (typeof SchemaValidator?.compileStrict !== 'function') {
    throw new Error('mass: qwen-code is not ${QWEN_CODE_VERSION}: update src/harness/schema-check-cache.ts');
  }
  const check = SchemaValidator.compileStrict;
  const { readFileSync, renameSync, writeFileSync } = await import('node:fs');
  const answers = new Map();
  const known = process.env.${SCHEMA_CHECKS_VARIABLE};
  const record = process.env.${SCHEMA_CHECKS_RECORD_VARIABLE};
  delete process.env.${SCHEMA_CHECKS_VARIABLE};
  delete process.env.${SCHEMA_CHECKS_RECORD_VARIABLE};
  if (known) {
    try {
      for (const [key, answer] of Object.entries(JSON.parse(readFileSync(known, 'utf8')))) {
        if (answer === null || typeof answer === 'string') answers.set(key, answer);
      }
    } catch {
      // No answers yet, or unreadable: every schema is checked.
    }
  }
  SchemaValidator.compileStrict = function (schema) {
    let key;
    try {
      key = JSON.stringify(schema);
    } catch {
      return check.call(this, schema);
    }
    if (typeof key !== 'string') return check.call(this, schema);
    if (!answers.has(key)) {
      answers.set(key, check.call(this, schema));
      if (record) {
        // Whole or not at all: another warm run may be writing the same file.
        writeFileSync(\`\${record}.\${process.pid}\`, JSON.stringify(Object.fromEntries(answers)));
        renameSync(\`\${record}.\${process.pid}\`, record);
      }
    }
    return answers.get(key);
  };
}
`;
}

/** Writes the preload into `directory` (the sandbox's own read-only files) and returns its path. */
export function writeSchemaCheckPreload(directory: string): string {
  return writeHarnessPreload(
    directory,
    SCHEMA_CHECK_PRELOAD_FILE_NAME,
    schemaCheckPreloadSource(schemaValidatorChunkPath()),
  );
}
