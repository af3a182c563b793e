import { createHash } from 'node:crypto';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { BareTasks, readEpisodeSource } from '../../src/distill/index.js';
import { hostPathReplacements, rewriteHostPaths } from '../../src/distill/host-path-rewrite.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import type { Thread } from '../../src/records/threads.js';
import { collect, fixtures, tasksDirectory } from './support.js';

/** Where the recorded fixture episodes ran (unsandboxed, before the sandbox fixed the workspace's path). */
const recordedRun = '/tmp/mass-distill-fixture-AiTa1m';

describe('host paths in the training data', () => {
  it('are replaced, in an episode that saw them, by the sandbox’s fixed paths, and every replacement is recorded', async () => {
    const bareTasks = new BareTasks([tasksDirectory]);
    const sources = await Promise.all(
      ['team-a', 'single'].map((name, index) =>
        readEpisodeSource(join(fixtures, name), index === 0 ? 'train' : 'validation', { bareTasks }),
      ),
    );
    expect(JSON.stringify(sources[0]!.threads)).toContain(`${recordedRun}/team-a/workspace`);
    const { conversations, stats } = await collect(sources);
    const data = JSON.stringify(conversations);
    expect(conversations.length).toBeGreaterThan(0);
    expect(data).not.toContain(recordedRun);
    expect(data).toContain('/workspace/results/metrics.json');
    // The harness named its home's context file relative to the workspace: `../home/…`, in a sandbox `../home/agent/…`.
    expect(data).toContain('../home/agent/output-language.md');
    const rewrites = (split: 'train' | 'validation') =>
      stats.splits[split].hostPaths!.map(({ episode, from, to }) => ({ episode, from, to }));
    expect(rewrites('train')).toEqual([
      { episode: 'team-a', from: `${recordedRun}/team-a/workspace`, to: '/workspace' },
      { episode: 'team-a', from: '../home', to: '../home/agent' },
    ]);
    expect(stats.splits.train.hostPaths![0]!.occurrences).toBeGreaterThan(10);
    expect(rewrites('validation')).toEqual([
      { episode: 'single', from: `${recordedRun}/single/workspace`, to: '/workspace' },
      { episode: 'single', from: '../home', to: '../home/agent' },
    ]);
  });

  it('covers the harness’s forms of them, leaves other paths alone, and nothing of a sandboxed episode', async () => {
    const base = await EpisodeRecord.read(join(fixtures, 'team-a', 'episode.json'));
    const workspace = '/srv/runs/r1/episodes/L0-x-v1/workspace';
    const home = '/srv/runs/r1/episodes/L0-x-v1/home';
    const unsandboxed = {
      ...base,
      episodeId: 'L0-x-v1',
      sandbox: { ...base.sandbox, enabled: false, workspacePath: workspace, homePath: home },
    };
    const hash = (text: string) => createHash('sha256').update(text).digest('hex');
    const text = [
      `cd ${workspace} && ls ${workspace}/data. Work in ${workspace}.`,
      `${home}/projects/-srv-runs-r1-episodes-L0-x-v1-workspace/chats`,
      `${home}/tmp/${hash(workspace)}/notes.md`,
      'Context from: ../home/output-language.md',
      // Not the workspace: longer names, and the same path under another folder.
      `${workspace}2/x ${workspace}.py /private${workspace}/x`,
    ].join('\n');
    const threads = [thread(text)];
    const { threads: rewritten, rewrites } = rewriteHostPaths({
      episodeId: 'L0-x-v1',
      threads,
      hostPaths: hostPathReplacements(unsandboxed, threads),
    });
    expect(rewritten[0]!.segments[0]!.messages[0]!.content).toBe(
      [
        'cd /workspace && ls /workspace/data. Work in /workspace.',
        '/home/agent/projects/-workspace/chats',
        `/home/agent/tmp/${hash('/workspace')}/notes.md`,
        'Context from: ../home/agent/output-language.md',
        `${workspace}2/x ${workspace}.py /private${workspace}/x`,
      ].join('\n'),
    );
    expect(rewrites.map((rewrite) => [rewrite.to, rewrite.occurrences])).toEqual([
      ['/workspace', 3],
      ['/home/agent', 2],
      ['-workspace', 1],
      [hash('/workspace'), 1],
      ['../home/agent', 1],
    ]);

    const sandboxed = {
      ...base,
      sandbox: { ...base.sandbox, workspacePath: '/workspace', homePath: '/home/agent' },
    };
    expect(hostPathReplacements(sandboxed, threads)).toEqual([]);
  });
});

function thread(content: string): Thread {
  return {
    schemaVersion: 1,
    threadId: 't1',
    role: 'orchestrator',
    firstSeq: 0,
    calls: 1,
    segments: [{ messages: [{ role: 'user', content }] }] as Thread['segments'],
    usage: { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 },
  };
}
