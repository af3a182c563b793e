import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { listFiles, materializeWorkspace } from '../../src/tasks/index.js';
import { limitConcurrency, loadResearchTask, RESEARCH_12_TASK_IDS, scratchDir } from './support.js';

const roots: string[] = [];
afterAll(() => Promise.all(roots.map((root) => rm(root, { recursive: true, force: true }))));

/** Digest of every file of a workspace (names and bytes). Generator speed is measured by `npm run bench generators`. */
async function generate(taskId: string, seed: number): Promise<{ digest: string; files: string[] }> {
  const task = await loadResearchTask(taskId);
  const root = await scratchDir(`generate-${taskId}`);
  roots.push(root);
  await materializeWorkspace(task, { seed, workspaceDir: path.join(root, 'workspace') });
  const workspaceDir = path.join(root, 'workspace');
  const files = await listFiles(workspaceDir);
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update(await readFile(path.join(workspaceDir, file)));
  return { digest: hash.digest('hex'), files };
}

const limit = limitConcurrency(2);

describe('generators', () => {
  it.each(RESEARCH_12_TASK_IDS)(
    '%s: same seed, same bytes; another seed, other data',
    async (taskId) => {
      const [first, second, other] = await Promise.all([
        limit(() => generate(taskId, 11)),
        limit(() => generate(taskId, 11)),
        limit(() => generate(taskId, 12)),
      ]);
      expect(second.digest).toBe(first.digest);
      expect(other.digest).not.toBe(first.digest);
      expect(other.files).toEqual(first.files);
    },
    60_000,
  );
});
