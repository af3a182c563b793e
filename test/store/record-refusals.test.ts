import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { UserError } from '../../src/errors.js';
import { temporaryDirectory } from './__fixtures__/test-run.js';
import { defineRecord } from '../../src/store/record.js';

const EpisodeRecord = defineRecord({
  kind: 'episode',
  version: 2,
  schema: z.object({
    id: z.string(),
    turns: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })),
  }),
});

function fileWith(content: string): string {
  const path = join(temporaryDirectory(), 'episode.json');
  writeFileSync(path, content);
  return path;
}

async function refusal(path: string): Promise<UserError> {
  const error: unknown = await EpisodeRecord.read(path).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof UserError)) throw new Error(`expected a UserError, got ${String(error)}`);
  return error;
}

describe('reading a record refuses', () => {
  it('a corrupt file, saying that deleting it redoes the step', async () => {
    const path = fileWith('{"schemaVersion": 2, "kind": "episode", "id": "e1", "tur');

    const error = await refusal(path);

    expect(error.message).toContain(`${path} is corrupt: it is not valid JSON`);
    expect(error.message).toContain(
      'Delete it and run the command again: the step that wrote it will be redone.',
    );
  });

  it('a record written by a newer mass, saying to upgrade', async () => {
    const path = fileWith(JSON.stringify({ schemaVersion: 3, kind: 'episode', id: 'e1', turns: [] }));

    const error = await refusal(path);

    expect(error.message).toBe(
      `${path} was written by a newer mass: schemaVersion 3, this version reads up to 2; upgrade mass.`,
    );
  });

  it('a file without schemaVersion', async () => {
    const path = fileWith(JSON.stringify({ kind: 'episode', id: 'e1', turns: [] }));

    const error = await refusal(path);

    expect(error.message).toContain(`${path} has no schemaVersion`);
    expect(error.message).toContain('Delete it and run the command again');
  });

  it('a record of another kind', async () => {
    const path = fileWith(JSON.stringify({ schemaVersion: 1, kind: 'verdict', winner: 'A' }));

    const error = await refusal(path);

    expect(error.message).toContain(`${path} holds a "verdict" record where a "episode" record was expected`);
  });

  it('a record that fails validation, naming the field', async () => {
    const path = fileWith(
      JSON.stringify({
        schemaVersion: 2,
        kind: 'episode',
        id: 'e1',
        turns: [
          { role: 'user', content: 'hello' },
          { role: 'narrator', content: 'hi' },
        ],
      }),
    );

    const error = await refusal(path);

    expect(error.message).toContain(`${path} is not a valid "episode" record: turns[1].role: `);
    expect(error.message).toContain('Delete it and run the command again');
  });

  it('a record older than this version when no migration is defined', async () => {
    const path = fileWith(JSON.stringify({ schemaVersion: 1, kind: 'episode', id: 'e1', turns: [] }));

    const error = await refusal(path);

    expect(error.message).toContain(`${path} was written by an older mass (schemaVersion 1)`);
  });

  it('a file that is not a JSON object', async () => {
    const error = await refusal(fileWith('[1, 2]'));

    expect(error.message).toContain('is not a "episode" record: expected a JSON object');
  });
});
