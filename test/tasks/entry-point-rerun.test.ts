import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { rerunOutcome } from '../../src/episode/entry-point-sandbox.js';
import { sandboxResult } from '../support/sandbox-result.js';
import {
  loadTask,
  rerunEntryPoint,
  type EntryPointRunRequest,
  type LoadedTask,
} from '../../src/tasks/index.js';
import { minimalManifest, removeScratch, scratch, writeToyTask } from './toy-task.js';

afterAll(removeScratch);

async function toyTaskWithEntryPoint(): Promise<LoadedTask> {
  const manifest = minimalManifest();
  manifest.deliverables = [
    ...(manifest.deliverables as unknown[]),
    {
      id: 'entry',
      kind: 'entry-point',
      path: 'run.py',
      description: 'Reproduces.',
      command: 'python3 run.py',
    },
  ];
  return loadTask(await writeToyTask(manifest));
}

/** A finished grading copy: data, code, and the deliverables the team left. */
async function gradingCopy(): Promise<string> {
  const copy = path.join(await scratch('mass-rerun-unit-'), 'copy');
  for (const [relative, text] of Object.entries({
    'data/values.csv': 'seed,value\n3,10\n',
    'run.py': 'print(1)\n',
    'helper.py': 'x = 1\n',
    'results/metrics.json': '{"answer": 42}',
    'research_report.md': '# Report\n',
  })) {
    await mkdir(path.dirname(path.join(copy, relative)), { recursive: true });
    await writeFile(path.join(copy, relative), text);
  }
  return copy;
}

describe('rerunning the entry point', () => {
  it('runs the command in a fresh copy without the deliverables, keeping data and code, and leaves the copy alone', async () => {
    const task = await toyTaskWithEntryPoint();
    const copy = await gradingCopy();
    const requests: Array<EntryPointRunRequest & { files: string[] }> = [];
    const result = await rerunEntryPoint(task, copy, path.join(path.dirname(copy), 'rerun'), {
      timeoutSeconds: 42,
      runner: async (request) => {
        const files = (await readdir(request.folder, { recursive: true })).map(String).sort();
        requests.push({ ...request, files });
        await writeFile(path.join(request.folder, 'results', 'metrics.json'), '{"answer": 41}');
        return { ok: true, reason: '' };
      },
    });
    expect(requests).toEqual([
      expect.objectContaining({
        command: 'python3 run.py',
        timeoutSeconds: 42,
        hiddenDirectories: [path.dirname(task.dir)],
        files: ['data', 'data/values.csv', 'helper.py', 'results', 'run.py'],
      }),
    ]);
    expect(requests[0]!.folder).not.toBe(copy);
    expect(await readFile(path.join(result, 'results', 'metrics.json'), 'utf8')).toBe('{"answer": 41}');
    expect(await readFile(path.join(copy, 'results', 'metrics.json'), 'utf8')).toBe('{"answer": 42}');
    await expect(readFile(`${result}.outcome.json`)).rejects.toThrow(/ENOENT/);
  });

  it('writes why a rerun failed beside its folder, and never throws for a runner that does', async () => {
    const task = await toyTaskWithEntryPoint();
    const copy = await gradingCopy();
    const failed = await rerunEntryPoint(task, copy, path.join(path.dirname(copy), 'failed'), {
      runner: () => Promise.resolve({ ok: false, reason: 'exited with 3' }),
    });
    expect(JSON.parse(await readFile(`${failed}.outcome.json`, 'utf8'))).toEqual({
      ok: false,
      reason: 'exited with 3',
    });
    const thrown = await rerunEntryPoint(task, copy, path.join(path.dirname(copy), 'thrown'), {
      runner: () => Promise.reject(new Error('bubblewrap is not installed')),
    });
    expect(JSON.parse(await readFile(`${thrown}.outcome.json`, 'utf8'))).toEqual({
      ok: false,
      reason: 'could not be run: bubblewrap is not installed',
    });
  });
});

describe("a rerun's outcome", () => {
  const base = sandboxResult({ wallSeconds: 1, cpuSeconds: 1 });

  it('is a success only for exit 0 within every limit', () => {
    expect(rerunOutcome(base, 60, 'noise')).toEqual({ ok: true, reason: '' });
    expect(rerunOutcome({ ...base, exitCode: 1 }, 60, 'Traceback\nValueError: bad\n')).toEqual({
      ok: false,
      reason: 'exited with 1; its output ended: Traceback\nValueError: bad',
    });
    expect(
      rerunOutcome({ ...base, exitCode: null, signal: 'SIGKILL', limitExceeded: 'wall-clock' }, 60, ''),
    ).toEqual({ ok: false, reason: 'timed out after 60 s' });
    expect(rerunOutcome({ ...base, exitCode: 0, limitExceeded: 'memory' }, 60, '').reason).toBe(
      'stopped at its memory limit',
    );
  });

  it('quotes only the printable end of the output', () => {
    const { reason } = rerunOutcome({ ...base, exitCode: 2 }, 60, `${'x'.repeat(5000)}\u001b[31mred\u0007`);
    expect(reason).toMatch(/^exited with 2; its output ended: …x+\?\[31mred\?$/);
    expect(reason.length).toBeLessThan(700);
  });
});
