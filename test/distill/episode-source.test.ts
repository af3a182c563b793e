import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { BareTasks, readEpisodeSource } from '../../src/distill/index.js';
import { episodePrompt } from '../../src/episode/prompt.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { renderTaskPrompt } from '../../src/tasks/render-prompt.js';
import { exportProxyLog } from '../../src/proxy/log-export.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { encodeRows, wholeRows, writeLog } from '../proxy/log-support.js';
import { fixtures, readThreads, tasksDirectory } from './support.js';

describe('reading an episode directory', () => {
  const directory = temporaryDirectory('mass-episode-source-');
  afterAll(() => directory.remove());

  /** A copy of the recorded team episode with some files left out or changed. */
  function copyOf(name: string, files: string[], edit?: (record: Record<string, unknown>) => void): string {
    const target = join(directory.path, name, 'team-a');
    mkdirSync(target, { recursive: true });
    for (const file of files) copyFileSync(join(fixtures, 'team-a', file), join(target, file));
    if (edit) {
      const record = JSON.parse(readFileSync(join(target, 'episode.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      edit(record);
      writeFileSync(join(target, 'episode.json'), JSON.stringify(record));
    }
    return target;
  }

  it('gives its threads, its prompt and the bare task that replaces it', async () => {
    const source = await readEpisodeSource(join(fixtures, 'team-a'), 'train', {
      bareTasks: new BareTasks([tasksDirectory]),
    });
    const task = await loadTask(join(tasksDirectory, 'tiny-sum'));
    expect(source).toMatchObject({ episodeId: 'team-a', taskId: 'tiny-sum', split: 'train', team: true });
    expect(source.bareTask).toBe(episodePrompt({ task: renderTaskPrompt(task) }));
    expect(source.prompt).toBe(readFileSync(join(fixtures, 'team-a', 'prompt.md'), 'utf8'));
    expect(source.threads).toEqual(readThreads('team-a'));
  });

  it('rebuilds the threads from the proxy log when threads.jsonl is missing', async () => {
    const dir = copyOf('log-only', ['episode.json', 'prompt.md', 'requests.jsonl']);
    const source = await readEpisodeSource(dir, 'validation', { bareTasks: new BareTasks([tasksDirectory]) });
    // Rebuilt now, each thread checked for forgery (version 2); the recorded ones are from before (version 1).
    expect(source.threads).toEqual(
      readThreads('team-a').map((thread) => ({ ...thread, schemaVersion: 2, forged: false })),
    );
  });

  it('gives the same threads, so the same training windows, from a native log and from its export', async () => {
    // The recorded log re-encoded as the proxy writes it now (each thing once), then exported back to whole bodies.
    const native = copyOf('native-log', ['episode.json', 'prompt.md']);
    writeLog(native, encodeRows(wholeRows(join(fixtures, 'team-a', 'requests.jsonl'))));
    const exported = copyOf('exported-log', ['episode.json', 'prompt.md']);
    await exportProxyLog(join(native, 'requests.jsonl'), join(exported, 'requests.jsonl'));
    expect(readFileSync(join(exported, 'requests.jsonl'), 'utf8')).not.toContain('"schemaVersion":2');
    const options = { bareTasks: new BareTasks([tasksDirectory]) };
    const [fromNative, fromExport] = await Promise.all([
      readEpisodeSource(native, 'train', options),
      readEpisodeSource(exported, 'train', options),
    ]);
    expect(fromNative.threads.length).toBeGreaterThan(1);
    expect(fromExport.threads).toEqual(fromNative.threads);
    expect(fromNative.threads).toEqual(
      readThreads('team-a').map((thread) => ({ ...thread, schemaVersion: 2, forged: false })),
    );
  });

  it('refuses a task whose text is not the one the episode ran, and a task it cannot find', async () => {
    const changed = join(directory.path, 'tasks', 'tiny-sum');
    cpSync(join(tasksDirectory, 'tiny-sum'), changed, { recursive: true });
    const manifest = readFileSync(join(changed, 'task.yaml'), 'utf8');
    writeFileSync(join(changed, 'task.yaml'), manifest.replace('Compute its sum', 'Compute its mean'));
    const moved = copyOf('moved', ['episode.json', 'prompt.md', 'threads.jsonl'], (record) => {
      record.task = { id: 'tiny-sum', dir: '/nowhere/tiny-sum' };
    });
    await expect(
      readEpisodeSource(moved, 'train', { bareTasks: new BareTasks([join(directory.path, 'tasks')]) }),
    ).rejects.toThrow(/prompt.md does not begin with the text of task "tiny-sum"/);
    await expect(readEpisodeSource(moved, 'train', { bareTasks: new BareTasks([]) })).rejects.toThrow(
      /no folder tiny-sum\/ with a task.yaml in \/nowhere; pass the task \(or its suite\) with --task-dir/,
    );
  });

  it('refuses an episode that did not succeed unless asked to use it', async () => {
    const failed = copyOf('failed', ['episode.json', 'prompt.md', 'threads.jsonl'], (record) => {
      record.status = 'failure';
      record.failure = { kind: 'timeout', detail: 'wall clock', lastToolCalls: [] };
    });
    const bareTasks = new BareTasks([tasksDirectory]);
    await expect(readEpisodeSource(failed, 'train', { bareTasks })).rejects.toThrow(
      /did not succeed \(timeout\)/,
    );
    await expect(readEpisodeSource(failed, 'train', { bareTasks, allowFailed: true })).resolves.toMatchObject(
      {
        episodeId: 'team-a',
      },
    );
  });
});
