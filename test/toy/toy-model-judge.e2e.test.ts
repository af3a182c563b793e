import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildWorkspaceBundle, judgePair, type WorkspaceBundle } from '../../src/judge/index.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { loadTokenCounter } from '../../src/model/token-counter.js';
import { loadTask, materializeWorkspace, renderTaskPrompt, type LoadedTask } from '../../src/tasks/index.js';
import { runPython } from '../../src/tasks/python.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { analysisScript, type ScriptPlan } from '../../src/toy/analysis-script.js';
import { BASE_TOY_WEIGHTS, startToyModel, TOY_OUTPUT_MARKER } from '../../src/toy/index.js';
import { readTask } from '../../src/toy/task-reading.js';

const taskDir = fileURLToPath(new URL('../../suites/demo/demo-volatility', import.meta.url));
const SEED = 5;

/** A workspace as a toy worker leaves it: the task's data, then the toy's own script run in it. */
async function toyWorkspace(
  task: LoadedTask,
  workspaceDir: string,
  choices: Pick<ScriptPlan, 'checksRun' | 'slipOmittedKey' | 'reportComplete'>,
): Promise<string> {
  await materializeWorkspace(task, { seed: SEED, workspaceDir });
  const reading = readTask(renderTaskPrompt(task));
  const script = analysisScript({
    agentId: 'analyst',
    title: reading.title,
    recipe: reading.recipe,
    dataFiles: reading.dataFiles,
    outputs: reading.deliverables,
    deliverables: reading.deliverables,
    checksSkipped: [],
    ...choices,
  });
  await writeFile(path.join(workspaceDir, 'analysis.py'), script);
  const run = await runPython(['analysis.py'], { cwd: workspaceDir, timeoutMs: 30_000 });
  expect(run.exitCode, run.stderr).toBe(0);
  return workspaceDir;
}

describe('the toy judge on real workspace bundles', () => {
  let task: LoadedTask;
  let root: string;
  let server: ReplyServer;
  let model: OpenAICompatibleModel;
  let careful: WorkspaceBundle;
  let careless: WorkspaceBundle;
  let carefulCopy: WorkspaceBundle;

  beforeAll(async () => {
    task = await loadTask(taskDir);
    root = await mkdtemp(path.join(tmpdir(), 'mass-toy-judge-'));
    const carefulDir = await toyWorkspace(task, path.join(root, 'careful'), {
      checksRun: ['values_finite', 'rerun_matches'],
      slipOmittedKey: null,
      reportComplete: true,
    });
    await toyWorkspace(task, path.join(root, 'careless'), {
      checksRun: [],
      slipOmittedKey: 'mean_daily_return',
      reportComplete: false,
    });
    await cp(carefulDir, path.join(root, 'copy'), { recursive: true });
    const tokenCounter = await loadTokenCounter();
    const bundle = (name: string) =>
      buildWorkspaceBundle({ task, location: path.join(root, name), tokenCounter });
    [careful, careless, carefulCopy] = [
      await bundle('careful'),
      await bundle('careless'),
      await bundle('copy'),
    ];
    server = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: 'mass-toy' });
    model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('prefers the workspace with every deliverable and passed checks, in both orders', async () => {
    expect(careful.summary.preflight.map((check) => check.status)).toEqual(['ok', 'ok']);
    expect(careless.summary.preflight.map((check) => check.status)).toEqual(['incomplete', 'incomplete']);
    const judgment = await judgePair({
      task,
      x: { label: 'careless', bundle: careless },
      y: { label: 'careful', bundle: careful },
      model,
      modelName: 'mass-toy',
      mode: 'both',
    });
    expect(judgment.status).toBe('decided');
    expect(judgment.ordersAgree).toBe(true);
    expect(judgment.winner).toBe('y');
    for (const single of judgment.judgments) {
      expect(single.attempts).toHaveLength(1);
      const raw = JSON.parse(single.attempts[0]!.rawOutput) as Record<string, unknown>;
      expect(Object.keys(raw).sort()).toEqual(['against_A', 'against_B', 'rationale', 'winner']);
      // The points name the careless workspace, wherever it was shown, and hold nothing against the careful one.
      const careless = single.shownAsA === 'x' ? 'A' : 'B';
      const careful = careless === 'A' ? 'B' : 'A';
      expect(single.verdict![`against_${careful}`]).toEqual([]);
      expect(single.verdict![`against_${careless}`]).toEqual([
        `Workspace ${careless}: the preflight finds \`results.json\` incomplete.`,
        `Workspace ${careless}: the preflight finds \`report.md\` incomplete.`,
        `Workspace ${careless}: 0 validation checks passed in its files, against 2 in Workspace ${careful}.`,
      ]);
      expect(single.verdict!.rationale).toContain(TOY_OUTPUT_MARKER);
      expect(single.verdict!.rationale).toMatch(
        /2 of 2 deliverables pass the preflight; 2 validation checks passed/,
      );
      expect(single.verdict!.rationale).toMatch(
        /0 of 2 deliverables pass the preflight \(results\.json incomplete, report\.md incomplete\)/,
      );
    }
  });

  it('calls two equal workspaces a tie', async () => {
    const judgment = await judgePair({
      task,
      x: { label: 'careful', bundle: careful },
      y: { label: 'copy', bundle: carefulCopy },
      model,
      modelName: 'mass-toy',
      seed: 3,
    });
    expect(judgment.status).toBe('decided');
    expect(judgment.winner).toBe('tie');
    // The copy's script is the same file: shown once, and its checks count for both.
    expect(judgment.sharedFiles).toContain('analysis.py');
    expect(judgment.judgments[0]!.verdict!.rationale).toMatch(/Both workspaces score 24 points/);
    expect(judgment.judgments[0]!.verdict).toMatchObject({ against_A: [], against_B: [] });
  });
});
