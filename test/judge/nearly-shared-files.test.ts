import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  judgeUserPrompt,
  renderSharedFiles,
  shareFiles,
  workspaceNames,
  type WorkspaceBundle,
} from '../../src/judge/index.js';
import { DIFFERING_NOTE, SHARED_NOTE } from '../../src/judge/shared-files.js';
import type { LoadedTask } from '../../src/tasks/index.js';
import { bundleOf, removeScratchDirectories, scratch, tinySumTask, tinySumWorkspace } from './support.js';

/** A script of 60 numbered lines, each unique; `changes` replaces lines (1-based) or inserts after them. */
function script(
  changes: { replace?: Record<number, string>; insertAfter?: Record<number, string> } = {},
): string {
  const lines: string[] = [];
  for (let number = 1; number <= 60; number++) {
    lines.push(
      changes.replace?.[number] ??
        `value_${number} = compute(${number}, weight=${number % 7})  # stage ${number}`,
    );
    if (changes.insertAfter?.[number] !== undefined) lines.push(changes.insertAfter[number]!);
  }
  return `${lines.join('\n')}\n`;
}

let task: LoadedTask;
let first: WorkspaceBundle;
let second: WorkspaceBundle;

beforeAll(async () => {
  task = await tinySumTask();
  const root = await scratch('nearly');
  first = await bundleOf(
    task,
    await tinySumWorkspace(path.join(root, 'one'), {
      files: {
        'analysis.py': script({
          replace: { 20: 'value_20 = compute(20, weight=0)  # first team: no weight' },
        }),
        'rewrite.py': script().replaceAll('value_', 'item_'),
      },
    }),
  );
  second = await bundleOf(
    task,
    await tinySumWorkspace(path.join(root, 'two'), {
      files: {
        'analysis.py': script({
          replace: { 20: 'value_20 = compute(20, weight=2)  # second team: weighted' },
          insertAfter: { 40: 'assert value_40 > 0  # second team: a check' },
        }),
        // Rewritten throughout: far more than a fifth of its lines differ.
        'rewrite.py': script().replaceAll('value_', 'item_').replaceAll('compute(', 'estimate('),
      },
    }),
  );
});
afterAll(removeScratchDirectories);

const occurrences = (text: string, part: string) => text.split(part).length - 1;

function userPrompt(shared: ReturnType<typeof shareFiles>, swapped = false): string {
  return judgeUserPrompt({
    taskText: 'the task',
    bundleA: swapped ? shared.bundleB : shared.bundleA,
    bundleB: swapped ? shared.bundleA : shared.bundleB,
    sameInBoth: renderSharedFiles(shared, workspaceNames(swapped)),
  });
}

describe('files that differ in a few lines between the two workspaces', () => {
  it('are shown once, before the workspaces, with the lines that differ on each side and their numbers', () => {
    const shared = shareFiles(first, second);
    expect(shared.paths).toEqual(['analysis.py']);
    expect(shared.files[0]!.difference).toMatchObject({ lines: { a: 60, b: 61 }, changed: { a: 1, b: 2 } });
    const user = userPrompt(shared);
    // A line the two share appears once in the whole prompt, not once per workspace.
    expect(occurrences(user, 'value_33 = compute(33')).toBe(1);
    const block = user.split('<same-in-both>\n')[1]!.split('\n</same-in-both>')[0]!;
    expect(block).toContain('Differs between Workspace A and Workspace B');
    // Each side's own lines, marked with the side and the line number in that side's file.
    expect(block).toMatch(/^A 20 \| value_20 = compute\(20, weight=0\) {2}# first team: no weight$/m);
    expect(block).toMatch(/^B 20 \| value_20 = compute\(20, weight=2\) {2}# second team: weighted$/m);
    expect(block).toMatch(/^B 41 \| assert value_40 > 0 {2}# second team: a check$/m);
    // Unchanged context around each change, numbered as in A, under a header giving both sides' ranges.
    expect(block).toMatch(/^@@ A lines 18–22, B lines 18–22 @@$/m);
    expect(block).toMatch(/^ {2}19 \| value_19 = compute/m);
    expect(block).toMatch(/^@@ A lines 39–42, B lines 39–43 @@$/m);
    for (const name of ['A', 'B']) {
      const bundle = user.split(`<workspace name="${name}">`)[1]!.split('</workspace>')[0]!;
      expect(bundle).toMatch(new RegExp(`#### \`analysis\\.py\` \\([^)]*\\)\\n${escape(DIFFERING_NOTE)}`));
      expect(bundle).not.toContain(SHARED_NOTE);
      // The rewritten file stays whole in each bundle.
      expect(bundle).toContain('#### `rewrite.py`');
    }
    expect(occurrences(user, 'item_33 = estimate(33')).toBe(1);
    expect(occurrences(user, 'item_33 = compute(33')).toBe(1);
  });

  it('show the same text in either A/B order, with the sides named as shown', () => {
    const block = (user: string) => user.split('<same-in-both>\n')[1]!.split('\n</same-in-both>')[0]!;
    // One judgment's two orders: the first team shown as A, then the second.
    const shared = shareFiles(first, second);
    const straight = block(userPrompt(shared));
    const swapped = block(userPrompt(shared, true));
    expect(straight).toMatch(/^A 20 \| value_20 = compute\(20, weight=0\)/m);
    expect(swapped).toMatch(/^A 20 \| value_20 = compute\(20, weight=2\)/m);
    expect(swapped).toMatch(/^B 20 \| value_20 = compute\(20, weight=0\)/m);
    // Only the names follow the order: the text shown is the same excerpt, the differing lines the same lines.
    const shownText = shared.files[0]!.shown.text;
    expect(straight).toContain(shownText);
    expect(swapped).toContain(shownText);
    const differing = (text: string, side: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith(`${side} `))
        .map((line) => line.slice(2));
    expect(differing(swapped, 'A')).toEqual(differing(straight, 'B'));
    expect(differing(swapped, 'B')).toEqual(differing(straight, 'A'));
    // Found from either side, the rule shows the same block.
    expect(renderSharedFiles(shareFiles(second, first), workspaceNames(true))).toBe(straight);
  });

  it('cost well under showing the file twice', () => {
    const once = userPrompt(shareFiles(first, second));
    const twice = judgeUserPrompt({ taskText: 'the task', bundleA: first.text, bundleB: second.text });
    const excerpt = first.excerpts.find((item) => item.path === 'analysis.py')!;
    expect(twice.length - once.length).toBeGreaterThan(excerpt.text.length * 0.4);
  });

  it('are not shared when only the ends of a file were read, or when no line differs', () => {
    const endsOnly = {
      ...second,
      excerpts: second.excerpts.map((excerpt) => {
        if (excerpt.path !== 'analysis.py') return excerpt;
        const { wholeText: _wholeText, ...rest } = excerpt;
        return { ...rest, digest: null };
      }),
    };
    expect(shareFiles(first, endsOnly).paths).toEqual([]);
    // Whole texts that differ where no line shows it (a final line break) leave each bundle its own file.
    const lineBreakOnly = {
      ...second,
      excerpts: second.excerpts.map((excerpt) => {
        if (excerpt.path !== 'analysis.py') return excerpt;
        const mine = first.excerpts.find((item) => item.path === 'analysis.py')!;
        return { ...excerpt, digest: 'f'.repeat(64), wholeText: mine.wholeText!.trimEnd() };
      }),
    };
    expect(shareFiles(first, lineBreakOnly).paths).toEqual([]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
