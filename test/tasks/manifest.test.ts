import { describe, expect, it } from 'vitest';

import { TaskManifest, withheldFolders } from '../../src/tasks/manifest.js';
import { describeIssues } from '../../src/tasks/manifest-errors.js';
import { minimalManifest } from './toy-task.js';

function problems(manifest: Record<string, unknown>): string[] {
  const result = TaskManifest.safeParse(manifest);
  return result.success ? [] : describeIssues('task.yaml', result.error.issues);
}

describe('task manifest', () => {
  it('fills defaults: environment, judge, generator output folder and timeout, report minimum words', () => {
    const manifest = TaskManifest.parse(minimalManifest());
    expect(manifest.environment).toEqual({
      runtime: 'python3',
      packages: ['numpy', 'pandas', 'matplotlib', 'scipy', 'scikit-learn'],
      network: false,
    });
    expect(manifest.judge).toEqual({});
    expect(manifest.inputs.generator).toEqual({
      script: 'generator/generate.py',
      outputDir: 'data',
      timeoutSeconds: 60,
    });
    expect(manifest.deliverables[0]).toMatchObject({ kind: 'report', requiredSections: [], minWords: 300 });
  });

  it('names the field of every problem', () => {
    const manifest = minimalManifest();
    manifest.split = 'validation';
    (manifest.deliverables as Array<Record<string, unknown>>)[1]!.kind = 'spreadsheet';
    manifest.colour = 'blue';
    expect(problems(manifest)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^task\.yaml: field "split": /),
        expect.stringMatching(/^task\.yaml: field "deliverables\[1\]\.kind": .*report, metrics-json/),
        'task.yaml: field "(top level)": unknown key "colour" (check the spelling against task-manifest.schema.json)',
      ]),
    );
  });

  it('explains the unquoted-comma mistake of YAML flow mappings', () => {
    const manifest = minimalManifest();
    const fields = (
      manifest.workflow as { agents: Array<{ contract?: { fields: Array<Record<string, unknown>> } }> }
    ).agents[1]!.contract!.fields;
    fields[0]!['each with the evidence.'] = null;
    expect(problems(manifest).join('\n')).toContain(
      'a comma inside an unquoted value of a { ... } mapping splits it',
    );
  });

  it('rejects paths that leave the folder, duplicated deliverables and graders outside oracle/', () => {
    const manifest = minimalManifest();
    const deliverables = manifest.deliverables as Array<Record<string, unknown>>;
    deliverables.push(
      { ...deliverables[0], id: 'report-again' },
      { ...deliverables[0], path: '../escape.md' },
    );
    manifest.oracle = { grader: 'tools/grade.py' };
    expect(problems(manifest)).toEqual(
      expect.arrayContaining([
        'task.yaml: field "deliverables[3].path": use a relative path inside the folder (no leading "/", no "..")',
        'task.yaml: field "deliverables[2].path": "research_report.md" is listed twice',
        'task.yaml: field "oracle.grader": the grader lives in the task\'s "oracle/" folder',
      ]),
    );
  });

  it('requires protected files to be input files and forbids inputs from withheld folders', () => {
    const manifest = minimalManifest();
    manifest.protected = ['sim/other.py'];
    (manifest.inputs as { files: unknown[] }).files.push({
      from: 'oracle/truth.json',
      to: 'data/truth.json',
    });
    (manifest.inputs as { files: unknown[] }).files.push({ from: 'generator/world.py', to: 'world.py' });
    expect(problems(manifest)).toEqual(
      expect.arrayContaining([
        'task.yaml: field "protected[0]": "sim/other.py" is not the "to" of any inputs.files entry',
        'task.yaml: field "inputs.files[1].from": "oracle/truth.json" is withheld (oracle or generator); it cannot be an input',
        'task.yaml: field "inputs.files[2].from": "generator/world.py" is withheld (oracle or generator); it cannot be an input',
      ]),
    );
  });

  it('asks for 3 to 6 agents in an initial workflow', () => {
    const manifest = minimalManifest();
    const workflow = manifest.workflow as { agents: unknown[]; hops: unknown[] };
    workflow.agents = workflow.agents.slice(0, 2);
    workflow.hops = workflow.hops.slice(0, 2);
    expect(problems(manifest)).toContain(
      'task.yaml: field "workflow.agents": an initial workflow has 3 to 6 agents (found 2)',
    );
  });

  it('accepts a task without a grader, and still checks a grader that is given', () => {
    const manifest = minimalManifest();
    delete manifest.oracle;
    expect(problems(manifest)).toEqual([]);
    expect(TaskManifest.parse(manifest).oracle).toBeUndefined();
    manifest.oracle = {};
    expect(problems(manifest).join('\n')).toMatch(/field "oracle\.grader"/);
  });

  it('withholds the oracle and the generator folder', () => {
    expect(withheldFolders(TaskManifest.parse(minimalManifest()))).toEqual(['oracle', 'generator']);
  });
});
