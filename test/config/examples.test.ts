import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { loadRunConfig } from '../../src/config/run-config.js';

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));

describe('the example configurations', () => {
  it.each(readdirSync(examples).filter((file) => file.endsWith('.yaml')))('%s is valid', async (file) => {
    const config = await loadRunConfig(`${examples}${file}`);
    expect(config.name).toMatch(/\S/);
  });
});
