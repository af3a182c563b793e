import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  graderManifest,
  listFiles,
  materializeWorkspace,
  renderTaskPrompt,
  type LoadedTask,
} from '../../src/tasks/index.js';
import { limitConcurrency, loadResearchTask, RESEARCH_12_TASK_IDS, scratchDir } from './support.js';

/** Every withheld file carries this marker, so a copy of one anywhere is easy to spot. */
const MARKER = 'mass:withheld';
const roots: string[] = [];
afterAll(() => Promise.all(roots.map((root) => rm(root, { recursive: true, force: true }))));

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

/** Lines long enough that finding one elsewhere means the file leaked. */
function distinctiveLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length >= 30);
}

async function withheldFiles(task: LoadedTask): Promise<Array<{ file: string; bytes: Buffer }>> {
  const files = (await Promise.all(task.withheldDirs.map(filesUnder))).flat();
  return Promise.all(files.map(async (file) => ({ file, bytes: await readFile(file) })));
}

const limit = limitConcurrency(2);

describe('withheld files (oracle, generator, shared grading code)', () => {
  it.each(RESEARCH_12_TASK_IDS)(
    '%s: nothing withheld reaches the workspace or the prompt',
    async (taskId) => {
      const task = await loadResearchTask(taskId);
      const root = await scratchDir(`withheld-${taskId}`);
      roots.push(root);
      const workspaceDir = path.join(root, 'workspace');
      const workspace = await limit(() => materializeWorkspace(task, { seed: 3, workspaceDir }));
      const withheld = await withheldFiles(task);
      expect(withheld.length).toBeGreaterThanOrEqual(3);
      for (const { file, bytes } of withheld.filter(({ file }) => file.endsWith('.py'))) {
        expect(bytes.toString('utf8'), `${file} lacks the ${MARKER} marker`).toContain(MARKER);
      }

      const prompt = renderTaskPrompt(task);
      const forbiddenLines = withheld.flatMap(({ bytes }) => distinctiveLines(bytes.toString('utf8')));
      const withheldDigests = new Set(withheld.map(({ bytes }) => bytes.toString('base64')));
      const texts: Array<[string, string]> = [['prompt', prompt]];
      for (const relative of workspace.files) {
        expect(relative).not.toMatch(/(^|\/)(oracle|generator|_lib)(\/|$)/);
        const bytes = await readFile(path.join(workspaceDir, relative));
        expect(
          withheldDigests.has(bytes.toString('base64')),
          `${relative} is a copy of a withheld file`,
        ).toBe(false);
        texts.push([relative, bytes.toString('utf8')]);
      }
      expect(await listFiles(workspaceDir)).toEqual(workspace.files);
      for (const [where, text] of texts) {
        expect(text.includes(MARKER), `${where} contains the withheld marker`).toBe(false);
        for (const line of forbiddenLines)
          expect(text.includes(line), `${where} contains "${line}"`).toBe(false);
      }
    },
    60_000,
  );

  it('tells the grader about deliverables and protected sources, nothing more', async () => {
    const task = await loadResearchTask('robotics-pid-tuning');
    const manifest = graderManifest(task) as { protected: Array<{ path: string; source: string }> };
    expect(Object.keys(manifest as object)).toEqual(['id', 'deliverables', 'protected']);
    expect(manifest.protected).toEqual([
      { path: 'sim/servo.py', source: path.join(task.dir, 'assets/sim/servo.py') },
    ]);
  });
});
