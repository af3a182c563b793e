import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { taskManifestJsonSchema } from '../../src/tasks/json-schema.js';
import { TASK_MANIFEST_SCHEMA_FILE } from '../../src/tasks/manifest-schema-file.js';

describe('the JSON Schema of task.yaml', () => {
  // Compared as data: `npm run format` rewraps the committed file. To regenerate it:
  // npm run build && node bin/mass.js tasks schema --write suites/task-manifest.schema.json && npm run format
  it('is committed up to date in suites/', async () => {
    const committed = await readFile(
      fileURLToPath(new URL(`../../suites/${TASK_MANIFEST_SCHEMA_FILE}`, import.meta.url)),
      'utf8',
    );
    expect(JSON.parse(committed)).toEqual(JSON.parse(taskManifestJsonSchema()));
  });

  it('describes the main fields for editors', () => {
    const schema = JSON.parse(taskManifestJsonSchema()) as {
      properties: Record<string, { description?: string }>;
    };
    expect(schema.properties.prompt?.description).toMatch(/Markdown/);
    expect(schema.properties.protected?.description).toMatch(/must not change/);
  });
});
