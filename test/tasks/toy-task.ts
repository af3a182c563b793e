import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { stringify } from 'yaml';

/** A small valid task.yaml as a plain object, for tests to break one field at a time. */
export function minimalManifest(id = 'toy-task'): Record<string, unknown> {
  return {
    schemaVersion: 1,
    id,
    title: 'Toy task',
    domain: 'finance',
    split: 'train',
    prompt: { file: 'prompt.md' },
    deliverables: [
      { id: 'report', kind: 'report', path: 'research_report.md', description: 'The report.' },
      {
        id: 'metrics',
        kind: 'metrics-json',
        path: 'results/metrics.json',
        description: 'Numbers.',
        requiredKeys: ['answer'],
      },
    ],
    inputs: {
      files: [{ from: 'assets/sim.py', to: 'sim/sim.py' }],
      generator: { script: 'generator/generate.py' },
    },
    protected: ['sim/sim.py'],
    workflow: {
      agents: [
        { id: 'orchestrator', kind: 'orchestrator', role: 'Lead.', instruction: 'Plan and delegate.' },
        {
          id: 'analyst',
          kind: 'subagent',
          role: 'Analyst.',
          instruction: 'Analyse.',
          contract: { fields: [{ name: 'answer', type: 'number', description: 'The answer.' }] },
        },
        {
          id: 'reviewer',
          kind: 'subagent',
          role: 'Reviewer.',
          instruction: 'Review.',
          contract: {
            fields: [{ name: 'approved', type: 'boolean', description: 'Approval.' }],
            checks: [{ name: 'numbers_match', description: 'Report equals files.' }],
          },
        },
      ],
      hops: [
        { from: 'orchestrator', to: 'analyst' },
        { from: 'analyst', to: 'orchestrator' },
        { from: 'orchestrator', to: 'reviewer' },
        { from: 'reviewer', to: 'analyst', condition: 'approved is false' },
        { from: 'analyst', to: 'orchestrator' },
        { from: 'orchestrator', to: 'reviewer' },
      ],
    },
    oracle: { grader: 'oracle/grade.py' },
  };
}

export const TOY_GENERATOR = `import argparse, pathlib
parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, required=True)
parser.add_argument("--out", required=True)
args = parser.parse_args()
pathlib.Path(args.out, "values.csv").write_text(f"seed,value\\n{args.seed},{args.seed * 7 % 11}\\n")
`;

export const TOY_GRADER = `# planted truth: the answer is 42 (ORACLE-SECRET-TOKEN)
import argparse, json, math, pathlib
parser = argparse.ArgumentParser()
parser.add_argument("--workspace", action="append", required=True)
parser.add_argument("--seed", type=int, required=True)
parser.add_argument("--task-dir", required=True)
parser.add_argument("--manifest")
args = parser.parse_args()
grades = []
for root in args.workspace:
    metrics = pathlib.Path(root, "results", "metrics.json")
    try:
        answer = json.loads(metrics.read_text())["answer"]
        score, reason = (1.0, "right") if answer == 42 else (0.0, f"answer {answer}")
    except Exception as error:
        score, reason = 0.0, f"results/metrics.json unreadable: {error}"
    grades.append({"schemaVersion": 1, "task": "toy-task", "seed": args.seed, "score": 100 * score,
                   "parts": [{"name": "answer", "weight": 1, "score": score, "reason": reason}], "capsApplied": []})
print(json.dumps(grades[0] if len(grades) == 1 else grades))
`;

const created: string[] = [];

/** A fresh scratch folder, removed by `removeScratch`. */
export async function scratch(prefix = 'mass-toy-'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** Removes every folder made by `scratch` and `writeToyTask`; call from afterAll. */
export async function removeScratch(): Promise<void> {
  await Promise.all(created.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/** Writes a complete toy task folder (manifest, prompt, asset, generator, grader) and returns its path. */
export async function writeToyTask(
  manifest: Record<string, unknown> = minimalManifest(),
  files: Record<string, string> = {},
): Promise<string> {
  const parent = await scratch('mass-toy-suite-');
  const dir = path.join(parent, String(manifest.id ?? 'toy-task'));
  const contents: Record<string, string> = {
    'task.yaml': stringify(manifest),
    'prompt.md': '# Toy task\n\nFind the answer.\n',
    'assets/sim.py': 'def simulate():\n    return 1\n',
    'generator/generate.py': TOY_GENERATOR,
    'oracle/grade.py': TOY_GRADER,
    ...files,
  };
  for (const [relative, text] of Object.entries(contents)) {
    await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
    await writeFile(path.join(dir, relative), text);
  }
  return dir;
}
