import { z } from 'zod';

import { TaskManifest } from './manifest.js';

/** The JSON Schema editors use for task.yaml, generated from the zod schema (input shape: defaults are optional). */
export function taskManifestJsonSchema(): string {
  const schema = z.toJSONSchema(TaskManifest, { io: 'input', target: 'draft-2020-12' });
  return `${JSON.stringify({ ...schema, title: 'MASS task manifest (task.yaml)' }, null, 2)}\n`;
}
