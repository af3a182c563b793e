import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LoadedTask } from '../../src/tasks/index.js';
import {
  bundleOf,
  episodeDirectory,
  episodeRecord,
  removeScratchDirectories,
  scratch,
  tinySumTask,
  tinySumWorkspace,
} from './support.js';

let task: LoadedTask;
let root: string;

beforeAll(async () => {
  task = await tinySumTask();
  root = await scratch('process');
});

afterAll(removeScratchDirectories);

describe('process evidence in the bundle', () => {
  it('summarises the run and lists the orchestrator’s delegations with what came back', async () => {
    const episodeDir = path.join(root, 'team');
    const dir = await episodeDirectory(episodeDir, episodeRecord(task), (workspace) =>
      tinySumWorkspace(workspace, {
        files: {
          'notes/worklog.md': `# Work log\n- 10:00 checked total against simulate.py\n- traceback in ${workspace}/simulate.py, logs in ${episodeDir}/events.jsonl\n`,
        },
      }),
    );
    const bundle = await bundleOf(task, dir);
    expect(bundle.summary.episode).toEqual({
      status: 'success',
      failureKind: null,
      delegations: 2,
      modelCalls: 9,
      problem: null,
    });
    const { text } = bundle;
    expect(text).toContain('Run outcome: finished successfully.');
    expect(text).toContain(
      'Model calls: 9; delegations by the orchestrator: 2; conversations: 1 orchestrator, 1 subagent.',
    );
    expect(text).toContain('Output tokens: 12,345 (of which reasoning 6,000); wall clock 12 min 3 s.');
    expect(text).toContain('2 delegations by the orchestrator, in order:');
    expect(text).toContain('1. general-purpose “generate data”');
    expect(text).toContain('asked: Write data.py that writes data.csv with 5 rows, and run it.');
    expect(text).toContain('returned: data.csv written with 5 rows.');
    expect(text).toContain('2. general-purpose “summarise data”');
    expect(text).toContain('#### `notes/worklog.md`');
    expect(text).toContain('checked total against simulate.py');
    expect(text).toContain('traceback in <workspace>/simulate.py, logs in <episode>/events.jsonl');
    // Nothing that identifies the run reaches the judge.
    for (const identifying of [
      'scripted-model',
      'feedfacefeedface',
      '127.0.0.1',
      'episode-under-test',
      root,
    ]) {
      expect(text).not.toContain(identifying);
    }
  });

  it('shows a failed run with its last tool calls', async () => {
    const record = episodeRecord(task, {
      status: 'failure',
      failure: {
        kind: 'timeout',
        detail: 'the episode ran past its 60 min wall-clock limit',
        lastToolCalls: [
          {
            name: 'run_shell_command',
            input: '{"command":"python3 tune.py --grid huge"}',
            parentToolUseId: null,
          },
        ],
      },
      sandbox: {
        enabled: true,
        exitCode: null,
        signal: 'SIGKILL',
        limitExceeded: 'wall-clock',
        cpuSeconds: 3600,
        peakMemoryBytes: 1,
      },
    });
    const dir = await episodeDirectory(path.join(root, 'failed'), record, (workspace) =>
      tinySumWorkspace(workspace),
    );
    const bundle = await bundleOf(task, dir);
    expect(bundle.summary.episode).toMatchObject({ status: 'failure', failureKind: 'timeout' });
    expect(bundle.text).toContain(
      'Run outcome: FAILED (timeout: the episode ran past its 60 min wall-clock limit).',
    );
    expect(bundle.text).toContain('The run hit its wall-clock limit.');
    expect(bundle.text).toContain('- run_shell_command {"command":"python3 tune.py --grid huge"}');
  });

  it('still builds the bundle when the episode record is damaged or absent, and says so', async () => {
    const damaged = await episodeDirectory(path.join(root, 'damaged'), undefined, (workspace) =>
      tinySumWorkspace(workspace),
    );
    await writeFile(
      path.join(damaged, 'episode.json'),
      '{"schemaVersion": 1, "kind": "episode", "status": 3}',
    );
    const bundle = await bundleOf(task, damaged);
    expect(bundle.summary.episode?.problem).toMatch(
      /^episode\.json could not be read: episode\.json is not a valid "episode" record/,
    );
    expect(bundle.text).toContain('Episode record: episode.json could not be read');
    expect(bundle.text).not.toContain(root);
    expect(bundle.text).toContain('2 delegations by the orchestrator');

    const unfinished = await episodeDirectory(path.join(root, 'unfinished'), undefined, (workspace) =>
      tinySumWorkspace(workspace),
    );
    expect((await bundleOf(task, unfinished)).text).toContain(
      'the episode has no episode.json (it did not finish)',
    );
  });

  it('says when a plain workspace folder has no process record', async () => {
    const bundle = await bundleOf(task, await tinySumWorkspace(path.join(root, 'plain')));
    expect(bundle.summary.source).toBe('workspace');
    expect(bundle.summary.episode).toBeNull();
    expect(bundle.text).toContain('No episode record: this is a plain workspace folder');
  });
});
