import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { withEpisodeEnvironment } from '../../src/episode/episode-environment.js';
import type { PreparedEpisode } from '../../src/episode/episode-prepare.js';
import type { EpisodeProxies } from '../../src/episode/episode-proxies.js';
import type { EpisodeOptions } from '../../src/episode/run-episode.js';
import type { TrialEnvironment } from '../../src/episode/trial-environment.js';
import { temporaryDirectory } from '../support/fixtures.js';

// The environment phase for a trial's environment, on a stand-in environment: no process, no sandbox. (An episode's
// own sandbox is opened by the episode e2e tests.)
describe("the environment phase in a trial's environment", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let calls: string[];

  beforeEach(() => {
    directory = temporaryDirectory('mass-episode-environment-');
    calls = [];
  });
  afterEach(() => directory.remove());

  function trialEnvironment(handBack: boolean): TrialEnvironment {
    return {
      kind: 'container',
      workdir: '/app',
      socketDirectory: join(directory.path, 'sockets'),
      proxyBaseUrl: 'http://127.0.0.1:18080',
      egressProxyUrl: 'http://127.0.0.1:18081',
      sharedDirectory: { host: join(directory.path, 'shared'), inside: '/run/mass-trial' },
      exec: () => Promise.reject(new Error('the phase runs no command itself')),
      putFiles: async (host, inside, user) => {
        calls.push(`put ${host} ${inside} as ${user}: ${readFileSync(join(host, 'settings.json'), 'utf8')}`);
      },
      getFiles: async (inside, host) => {
        calls.push(`get ${inside} ${host}`);
        if (!handBack) return null;
        mkdirSync(host, { recursive: true });
        writeFileSync(join(host, 'answer.txt'), '42');
        return { files: 1, bytes: 2, links: [], clearedBits: [], leftOut: [] };
      },
      remove: async () => {
        calls.push('remove');
      },
    };
  }

  function episode(): PreparedEpisode {
    const outDir = join(directory.path, 'episode');
    const workspaceDir = join(outDir, 'workspace');
    mkdirSync(workspaceDir, { recursive: true });
    writeFileSync(join(workspaceDir, 'stale.txt'), 'from before');
    return {
      outDir,
      workspaceDir,
      log: (line: string) => calls.push(`log ${line}`),
    } as unknown as PreparedEpisode;
  }

  const options = (environment: TrialEnvironment): EpisodeOptions =>
    ({
      environment,
      environmentUser: 'agent',
      environmentEnv: { TASK_VAR: '1' },
      timeoutSeconds: 90,
      cpuSeconds: 5,
    }) as unknown as EpisodeOptions;

  it('runs the harness as the task’s user, under the wall-clock limit only, and hands the working folder back', async () => {
    const environment = trialEnvironment(true);
    const prepared = episode();
    const seen = await withEpisodeEnvironment(
      options(environment),
      prepared,
      {} as EpisodeProxies,
      async (at) => {
        expect(at.isolation).toBe(environment);
        expect(at.label).toBe('container trial environment');
        expect(at.command).toEqual({
          user: 'agent',
          env: { TASK_VAR: '1' },
          limits: { wallClockSeconds: 90 },
        });
        expect(at.agentPaths).toEqual({ workspacePath: '/app', homePath: '/tmp/mass-harness-home' });
        expect(at.place.isolated).toBe(true);
        expect(at.place.homeInside).toBe('/tmp/mass-harness-home');
        expect(at.place.guardDirectory).toBe(join(directory.path, 'shared'));
        expect(at.place.pathInside(join(directory.path, 'shared', 'guard.cjs'))).toBe(
          '/run/mass-trial/guard.cjs',
        );
        expect(at.place.pathInside('/opt/harness/cli.js')).toBe('/opt/harness/cli.js');
        writeFileSync(join(at.place.homeDirectory, 'settings.json'), '{"model":"m"}');
        await at.beforeHarness();
        await at.afterHarness();
        return 'done';
      },
    );
    expect(seen).toBe('done');
    const home = join(prepared.outDir, 'home');
    expect(calls).toEqual([
      `put ${home} /tmp/mass-harness-home as agent: {"model":"m"}`,
      `get /app ${prepared.workspaceDir}`,
    ]);
    // What was in the workspace folder before is gone: it holds what the agents left, and nothing else.
    expect(existsSync(join(prepared.workspaceDir, 'stale.txt'))).toBe(false);
    expect(readFileSync(join(prepared.workspaceDir, 'answer.txt'), 'utf8')).toBe('42');
  });

  it('leaves an empty workspace when the working folder is gone, and never removes the environment', async () => {
    const prepared = episode();
    await withEpisodeEnvironment(
      options(trialEnvironment(false)),
      prepared,
      {} as EpisodeProxies,
      async (at) => {
        await at.afterHarness();
      },
    );
    expect(existsSync(prepared.workspaceDir)).toBe(true);
    expect(existsSync(join(prepared.workspaceDir, 'stale.txt'))).toBe(false);
    expect(calls).not.toContain('remove');
  });
});
