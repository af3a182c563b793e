import { describe, expect, it } from 'vitest';

import { TaskManifest } from '../../src/tasks/manifest.js';
import { describeIssues } from '../../src/tasks/manifest-errors.js';
import { renderTaskPrompt } from '../../src/tasks/render-prompt.js';
import { minimalManifest } from './toy-task.js';

function withNetwork(network: unknown): Record<string, unknown> {
  return { ...minimalManifest(), environment: { network } };
}

function problems(manifest: Record<string, unknown>): string[] {
  const result = TaskManifest.safeParse(manifest);
  return result.success ? [] : describeIssues('task.yaml', result.error.issues);
}

describe('environment.network in task.yaml', () => {
  it('is false by default, and takes an allow-list of hosts', () => {
    expect(TaskManifest.parse(minimalManifest()).environment.network).toBe(false);
    const manifest = TaskManifest.parse(
      withNetwork({ allow: ['pypi.org', 'files.pythonhosted.org', '127.0.0.1:8000'] }),
    );
    expect(manifest.environment).toEqual({
      runtime: 'python3',
      packages: ['numpy', 'pandas', 'matplotlib', 'scipy', 'scikit-learn'],
      network: { allow: ['pypi.org', 'files.pythonhosted.org', '127.0.0.1:8000'] },
    });
  });

  it('names the entry that is wrong and why', () => {
    expect(problems(withNetwork({ allow: ['pypi.org', 'pypi.org:99999'] })).join('\n')).toMatch(
      /field "environment\.network\.allow\[1\]": .*"pypi\.org:99999" has port "99999", not a number from 1 to 65535/,
    );
    expect(problems(withNetwork({ allow: [] })).join('\n')).toMatch(
      /list at least one host, or write network: false/,
    );
    expect(problems(withNetwork({ allow: ['pypi.org'], deny: ['x.org'] })).join('\n')).toMatch(/deny/);
    expect(problems(withNetwork(true))).not.toEqual([]);
  });

  it('tells the team which hosts it may reach, and how', () => {
    const manifest = TaskManifest.parse(withNetwork({ allow: ['pypi.org', '*.rcsb.org:443'] }));
    const prompt = renderTaskPrompt({ manifest, prompt: '# Task', dir: '/tasks/x' } as never);
    expect(prompt).toContain('Network access only to `pypi.org`, `*.rcsb.org:443`');
    expect(prompt).toContain('HTTP_PROXY');
    const offline = renderTaskPrompt({
      manifest: TaskManifest.parse(minimalManifest()),
      prompt: '# Task',
    } as never);
    expect(offline).toContain('No network access');
  });
});
