import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import {
  judgePair,
  judgeUserPrompt,
  renderSharedFiles,
  shareFiles,
  workspaceNames,
  type WorkspaceBundle,
} from '../../src/judge/index.js';
import { PairwiseJudgmentRecord } from '../../src/records/index.js';
import { SHARED_NOTE } from '../../src/judge/shared-files.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import type { LoadedTask } from '../../src/tasks/index.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import {
  bundleOf,
  removeScratchDirectories,
  scratch,
  tinySumTask,
  tinySumWorkspace,
  tokenCounter,
  verdictJson,
} from './support.js';

/** A module both teams left unchanged: long enough (about 500 tokens) to be worth showing once. */
const SHARED_MODULE = [
  '"""Helpers both teams use: read the column, sum it, write the metrics."""',
  'import csv',
  'import json',
  'import os',
  '',
  ...Array.from({ length: 14 }, (_, index) =>
    [
      '',
      `def step_${index}(rows, column="x"):`,
      `    """Stage ${index} of the pipeline: keep the rows whose ${column(index)} is finite, then pass them on."""`,
      `    kept = [row for row in rows if row.get(column) not in (None, "", "nan")]`,
      `    return [dict(row, stage=${index}) for row in kept]`,
    ].join('\n'),
  ),
].join('\n');

function column(index: number): string {
  return ['value', 'count', 'weight', 'entry'][index % 4]!;
}

const SMALL_SHARED = 'TOTAL_KEY = "total"\n';

let task: LoadedTask;
let first: WorkspaceBundle;
let second: WorkspaceBundle;
let server: ScriptedServer | undefined;

beforeAll(async () => {
  task = await tinySumTask();
  const root = await scratch('shared');
  first = await bundleOf(
    task,
    await tinySumWorkspace(path.join(root, 'one'), {
      files: {
        'pipeline.py': SHARED_MODULE,
        'constants.py': SMALL_SHARED,
        'run.py': 'import pipeline\nprint("first team: sums with the helpers")\n',
      },
    }),
  );
  second = await bundleOf(
    task,
    await tinySumWorkspace(path.join(root, 'two'), {
      metrics: '{"total": 14}\n',
      files: {
        'pipeline.py': SHARED_MODULE,
        'constants.py': SMALL_SHARED,
        'run.py': 'import pipeline\nprint("second team: adds a column of its own")\n',
      },
    }),
  );
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeScratchDirectories);

const occurrences = (text: string, part: string) => text.split(part).length - 1;
const UNIQUE_LINE = 'def step_13(rows, column="x"):';

describe('files the same in both workspaces', () => {
  it('are shown once, before the two workspaces, each bundle naming them where they were', () => {
    // Each bundle shows the module in full on its own.
    expect(occurrences(first.text, UNIQUE_LINE)).toBe(1);
    expect(occurrences(second.text, UNIQUE_LINE)).toBe(1);

    const shared = shareFiles(first, second);
    expect(shared.paths).toEqual(['pipeline.py']);
    const user = judgeUserPrompt({
      taskText: 'the task',
      bundleA: shared.bundleA,
      bundleB: shared.bundleB,
      sameInBoth: renderSharedFiles(shared, workspaceNames()),
    });
    expect(occurrences(user, UNIQUE_LINE)).toBe(1);
    const block = user.split('<same-in-both>\n')[1]!.split('\n</same-in-both>')[0]!;
    expect(block).toMatch(/^This file is the same in Workspace A and Workspace B/);
    expect(block).toContain(UNIQUE_LINE);
    for (const name of ['A', 'B']) {
      const bundle = user.split(`<workspace name="${name}">`)[1]!.split('</workspace>')[0]!;
      expect(bundle).toMatch(new RegExp(`#### \`pipeline\\.py\` \\([^)]*\\)\\n${escape(SHARED_NOTE)}`));
      // A small file alike in both, and a file of the same name that differs, stay in each bundle.
      expect(bundle).toContain(SMALL_SHARED.trim());
      expect(bundle).toContain('#### `run.py`');
    }
    expect(user).toContain('first team: sums with the helpers');
    expect(user).toContain('second team: adds a column of its own');
    expect(user.indexOf('<same-in-both>')).toBeLessThan(user.indexOf('<workspace name="A">'));
  });

  it('cost fewer tokens than showing them twice, and do not depend on the A/B order', async () => {
    const counter = await tokenCounter();
    const shared = shareFiles(first, second);
    const swapped = shareFiles(second, first);
    const sameInBoth = renderSharedFiles(shared, workspaceNames());
    expect(renderSharedFiles(swapped, workspaceNames(true))).toBe(sameInBoth);
    expect(swapped.bundleA).toBe(shared.bundleB);
    const once = judgeUserPrompt({
      taskText: 't',
      bundleA: shared.bundleA,
      bundleB: shared.bundleB,
      sameInBoth,
    });
    const twice = judgeUserPrompt({ taskText: 't', bundleA: first.text, bundleB: second.text });
    const saved = counter.count(twice) - counter.count(once);
    const module = first.excerpts.find((excerpt) => excerpt.path === 'pipeline.py')!;
    expect(module.tokens).toBeGreaterThan(300);
    // What it costs: the block's opening line and tags, and a note in each bundle.
    expect(saved).toBeGreaterThan(module.tokens - 120);
  });

  it('are none when nothing is alike, and a file is alike only when its whole text is, or nearly', () => {
    // The same excerpt shown, but the whole files differ in most lines: each bundle keeps its own.
    const changed = {
      ...second,
      excerpts: second.excerpts.map((excerpt) =>
        excerpt.path === 'pipeline.py'
          ? { ...excerpt, digest: 'f'.repeat(64), wholeText: SHARED_MODULE.replaceAll('rows', 'items') }
          : excerpt,
      ),
    };
    const shared = shareFiles(first, changed);
    expect(shared).toMatchObject({ paths: [], files: [], bundleA: first.text, bundleB: second.text });
    const sameInBoth = renderSharedFiles(shared, workspaceNames());
    expect(sameInBoth).toBe('');
    expect(
      judgeUserPrompt({ taskText: 't', bundleA: shared.bundleA, bundleB: shared.bundleB, sameInBoth }),
    ).not.toContain('same-in-both');
  });

  it('reach the judge in both orders and are recorded with the judgment', async () => {
    server = await startScriptedServer({
      script: [step.text(verdictJson('A')), step.text(verdictJson('B'))],
    });
    const model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
    const judgment = await judgePair({
      task,
      x: { label: 'one', bundle: first },
      y: { label: 'two', bundle: second },
      model,
      modelName: 'judge',
      mode: 'both',
    });
    expect(judgment.sharedFiles).toEqual(['pipeline.py']);
    for (const single of judgment.judgments) {
      expect(occurrences(single.prompt.user, UNIQUE_LINE)).toBe(1);
      expect(single.prompt.system).toContain('<same-in-both>');
    }
    const stored = PairwiseJudgmentRecord.parse(
      JSON.parse(PairwiseJudgmentRecord.serialize(judgment)),
      'test',
    );
    expect(stored.sharedFiles).toEqual(['pipeline.py']);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
