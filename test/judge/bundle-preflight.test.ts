import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DeliverableCheck } from '../../src/records/index.js';
import { loadTask, type LoadedTask } from '../../src/tasks/index.js';
import { loadResearchTask } from '../tasks/support.js';
import {
  bundleOf,
  removeScratchDirectories,
  scratch,
  tinySumDir,
  tinySumWorkspace,
  writeText,
} from './support.js';

let task: LoadedTask;
let root: string;

/** A minimal PNG: signature, header chunk, and (unless `truncated`) the end chunk. CRCs are not checked. */
function png(width: number, height: number, truncated = false): Buffer {
  const header = Buffer.alloc(25);
  header.writeUInt32BE(13, 0);
  header.write('IHDR', 4, 'latin1');
  header.writeUInt32BE(width, 8);
  header.writeUInt32BE(height, 12);
  header[16] = 8;
  header[17] = 2;
  const end = Buffer.from([0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, header, Buffer.alloc(2000, 7), ...(truncated ? [] : [end])]);
}

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`).join(' ');
const completeReport = ['Summary', 'Data', 'Method', 'Results', 'Limitations']
  .map((section, index) => `## ${index + 1}. ${section}\n\n${words(60)}\n`)
  .join('\n');

/** A robotics-pid-tuning workspace where every deliverable passes; `change` then breaks some. */
async function pidWorkspace(
  name: string,
  change: Record<string, string | Buffer | null> = {},
): Promise<string> {
  const dir = path.join(root, name);
  const files: Record<string, string | Buffer> = {
    'sim/servo.py': '',
    'research_report.md': `# PID study\n\n${completeReport}`,
    'results/metrics.json': JSON.stringify({
      pass_rate: 0.95,
      worst_overshoot_pct: 6.1,
      worst_settling_time_s: 0.7,
      mean_itae: 0.02,
    }),
    'results/controller.json': JSON.stringify({
      kp: 4,
      ki: 0.1,
      kd: 0.4,
      derivative_filter_s: 0.003,
      anti_windup: true,
    }),
    'results/ablation.json': JSON.stringify({
      variants: [
        { name: 'full', pass_rate: 0.95 },
        { name: 'no_integral', pass_rate: 0.5 },
      ],
    }),
    'deliverables/plots/step_responses.png': png(640, 480),
    'deliverables/plots/robustness.png': png(640, 480),
    'run.py': 'import json\nprint("reproduce")\n',
  };
  await cp(path.join(task.dir, 'assets/sim/servo.py'), path.join(dir, 'sim/servo.py'), { recursive: true });
  delete files['sim/servo.py'];
  for (const [file, content] of Object.entries({ ...files, ...change })) {
    if (content !== null) await writeText(dir, file, content);
  }
  return dir;
}

async function preflightOf(dir: string, budgetTask = task) {
  const bundle = await bundleOf(budgetTask, dir);
  const byId = new Map<string, DeliverableCheck>(bundle.summary.preflight.map((check) => [check.id, check]));
  return { bundle, check: (id: string) => byId.get(id)! };
}

beforeAll(async () => {
  task = await loadResearchTask('robotics-pid-tuning');
  root = await scratch('preflight');
});

afterAll(removeScratchDirectories);

describe('the deliverables preflight', () => {
  it('passes a workspace that has every deliverable in order', async () => {
    const { bundle } = await preflightOf(await pidWorkspace('complete'));
    expect(bundle.summary.preflight.map((check) => [check.id, check.status])).toEqual([
      ['report', 'ok'],
      ['metrics', 'ok'],
      ['controller', 'ok'],
      ['ablation', 'ok'],
      ['step-responses', 'ok'],
      ['robustness', 'ok'],
      ['entry-point', 'ok'],
    ]);
    expect(bundle.text).toContain('7 deliverables asked by the task: 7 ok.');
    expect(bundle.text).toContain('`deliverables/plots/robustness.png` (plot): PNG 640×480 px');
  });

  it('shows a missing deliverable', async () => {
    const { bundle, check } = await preflightOf(
      await pidWorkspace('missing', { 'results/ablation.json': null }),
    );
    expect(check('ablation')).toMatchObject({ status: 'missing', matched: [], problems: ['not found'] });
    expect(bundle.text).toContain('6 ok, 1 missing');
    expect(bundle.text).toContain('- [MISSING] `results/ablation.json` (ablation-json): PROBLEM: not found');
  });

  it('flags NaN and Infinity in metrics, naming the keys', async () => {
    const { bundle, check } = await preflightOf(
      await pidWorkspace('nan', {
        'results/metrics.json':
          '{"pass_rate": NaN, "worst_overshoot_pct": Infinity, "worst_settling_time_s": 0.7, "mean_itae": 0.1}',
      }),
    );
    expect(check('metrics')).toMatchObject({
      status: 'invalid',
      problems: [
        'not valid JSON: bare NaN/Infinity literals (not JSON) at `pass_rate`, `worst_overshoot_pct`',
      ],
    });
    expect(bundle.text).toContain('[INVALID] `results/metrics.json`');
  });

  it('flags invalid JSON, and missing, null and non-finite values', async () => {
    const { check } = await preflightOf(
      await pidWorkspace('broken-json', {
        'results/controller.json': '{"kp": 4,\n "ki": }',
        'results/metrics.json': JSON.stringify({
          pass_rate: null,
          worst_overshoot_pct: 'nan',
          mean_itae: 0.1,
        }),
      }),
    );
    expect(check('controller').status).toBe('invalid');
    expect(check('controller').problems).toEqual([
      expect.stringMatching(/^not valid JSON: Unexpected token '}'/),
    ]);
    expect(check('metrics')).toMatchObject({
      status: 'incomplete',
      problems: [
        'required keys missing: worst_settling_time_s',
        'required keys set to null: pass_rate',
        'non-finite values written as strings at `worst_overshoot_pct`',
      ],
    });
  });

  it('checks plots as PNGs: unreadable, too small or truncated', async () => {
    const { check } = await preflightOf(
      await pidWorkspace('plots', {
        'deliverables/plots/step_responses.png': '<svg xmlns="http://www.w3.org/2000/svg"></svg>',
        'deliverables/plots/robustness.png': png(40, 30, true),
      }),
    );
    expect(check('step-responses')).toMatchObject({
      status: 'invalid',
      problems: ['not a PNG (looks like SVG/XML text)'],
    });
    expect(check('robustness')).toMatchObject({
      status: 'invalid',
      problems: ['the PNG has no end chunk (truncated)', 'only 40×30 pixels: too small to show a result'],
    });
  });

  it('reports missing sections and a short report, and too few ablation variants', async () => {
    const { check } = await preflightOf(
      await pidWorkspace('report', {
        'research_report.md':
          '# Study\n\n## Summary\nShort.\n\n## Results and discussion\nFine.\n\n```\n## Method\n```\n',
        'results/ablation.json': JSON.stringify({ only: { pass_rate: 1 }, label: 'x' }),
      }),
    );
    expect(check('report')).toMatchObject({
      status: 'incomplete',
      problems: ['14 words, fewer than the 200 asked', 'missing sections: Data, Method, Limitations'],
    });
    expect(check('ablation')).toMatchObject({
      status: 'incomplete',
      problems: ['1 variants with numbers, fewer than the 2 asked'],
    });
  });

  it('reports an empty file as empty', async () => {
    const { check } = await preflightOf(await pidWorkspace('empty', { 'run.py': '' }));
    expect(check('entry-point')).toMatchObject({ status: 'empty', problems: ['the file is empty'] });
  });

  it('matches globbed deliverable paths and checks every match', async () => {
    const taskDir = path.join(root, 'tasks', 'tiny-sum');
    await cp(tinySumDir, taskDir, { recursive: true });
    const manifest = await readFile(path.join(taskDir, 'task.yaml'), 'utf8');
    await writeFile(
      path.join(taskDir, 'task.yaml'),
      manifest.replace(
        'deliverables:\n',
        'deliverables:\n  - { id: plots, kind: plot, path: "figures/**/*.png", description: Any figures. }\n',
      ),
    );
    const globTask = await loadTask(taskDir);
    const dir = await tinySumWorkspace(path.join(root, 'glob'), {
      files: {
        'figures/a.png': png(300, 200),
        'figures/more/b.png': 'not an image',
        'figures/notes.txt': 'x',
      },
    });
    const { check } = await preflightOf(dir, globTask);
    expect(check('plots')).toMatchObject({
      status: 'invalid',
      matched: ['figures/a.png', 'figures/more/b.png'],
      facts: ['figures/a.png: PNG 300×200 px'],
      problems: ['figures/more/b.png: not a PNG (unknown signature)'],
    });
    await rm(path.join(dir, 'figures'), { recursive: true });
    expect((await preflightOf(dir, globTask)).check('plots')).toMatchObject({
      status: 'missing',
      problems: ['no file matches'],
    });
  });
});
