import { describe, expect, it } from 'vitest';

import { TaskManifest } from '../../src/tasks/manifest.js';
import { describeIssues } from '../../src/tasks/manifest-errors.js';
import { renderTaskPrompt } from '../../src/tasks/render-prompt.js';
import { EpisodeNetwork, networkAllowProblems } from '../../src/tasks/task-network.js';
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

  it('is flagged by mass tasks validate when it lists an IP address or a name for local use', () => {
    const network = TaskManifest.parse(
      withNetwork({
        allow: [
          'pypi.org',
          '127.0.0.1:6379',
          '[::1]:8080',
          '169.254.169.254',
          '8.8.8.8',
          'metadata.google.internal',
          '*.lab.internal:5432',
          'localhost:8000',
          '*.rcsb.org',
        ],
      }),
    ).environment.network;
    const flagged = networkAllowProblems(network);
    expect(flagged).toHaveLength(7);
    expect(flagged[0]).toBe(
      'field "environment.network.allow[1]": "127.0.0.1:6379" is a loopback address (127.0.0.0/8); a task never opens such a destination, only the run configuration does (network.privateDestinations): remove it, or name a public host',
    );
    expect(flagged.join('\n')).toMatch(/allow\[3\]": "169\.254\.169\.254" is a cloud metadata address/);
    expect(flagged.join('\n')).toMatch(
      /allow\[4\]": "8\.8\.8\.8" is a public IP address; .*write the host's name/,
    );
    expect(flagged.join('\n')).toMatch(/allow\[6\]": "\*\.lab\.internal:5432" is a name for local use/);
    expect(
      networkAllowProblems(
        TaskManifest.parse(withNetwork({ allow: ['pypi.org', '*.rcsb.org'] })).environment.network,
      ),
    ).toEqual([]);
    expect(networkAllowProblems(false)).toEqual([]);
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

  it('cannot ask for every public host: only a run gives it, and the team is told', () => {
    expect(problems(withNetwork({ anyPublicHost: true }))).not.toEqual([]);
    expect(problems(withNetwork({ allow: ['*'] })).join('\n')).toMatch(/allow\[0\]/);
    expect(problems(withNetwork({ allow: ['pypi.org'], anyPublicHost: true }))).not.toEqual([]);
    expect(EpisodeNetwork.parse({ anyPublicHost: true })).toEqual({ anyPublicHost: true });
    expect(EpisodeNetwork.safeParse({ anyPublicHost: false }).success).toBe(false);
    const prompt = renderTaskPrompt(
      { manifest: TaskManifest.parse(minimalManifest()), prompt: '# Task', dir: '/tasks/x' } as never,
      { anyPublicHost: true },
    );
    expect(prompt).toContain('Internet access to public hosts through the proxy that HTTP_PROXY');
    expect(prompt).not.toContain('No network access');
  });
});
