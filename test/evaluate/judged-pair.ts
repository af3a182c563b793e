import path from 'node:path';

import type { JudgedEpisodes } from '../../src/evaluate/evaluation-judgments.js';
import type { ServedJudge } from '../../src/evaluate/serve-evaluation.js';
import type { WorkspaceBundle } from '../../src/judge/index.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import type { LoadedTask } from '../../src/tasks/index.js';
import { bundleOf, tinySumTask, tinySumWorkspace } from '../judge/support.js';

/** Two finished tiny-sum workspaces to judge: the candidate's total is right, the baseline's (14) is not. */
export interface TinySumPair {
  task: LoadedTask;
  candidate: WorkspaceBundle;
  baseline: WorkspaceBundle;
}

/** The pair's bundles, their workspaces under `root`. */
export async function tinySumPair(root: string): Promise<TinySumPair> {
  const task = await tinySumTask();
  const candidate = await bundleOf(task, await tinySumWorkspace(path.join(root, 'candidate')));
  const baseline = await bundleOf(
    task,
    await tinySumWorkspace(path.join(root, 'baseline'), { metrics: '{"total": 14}\n' }),
  );
  return { task, candidate, baseline };
}

/** The pair as an evaluation judges it: L1's episode against L0's, bare, replicate `replicate`. */
export function judgedEpisodes(
  pair: TinySumPair,
  replicate: number,
  episodeId: (label: string) => string,
): JudgedEpisodes {
  return {
    sample: 'evaluation',
    task: pair.task,
    condition: 'bare',
    replicate,
    candidate: { label: 'L1', episodeId: episodeId('L1'), bundle: () => Promise.resolve(pair.candidate) },
    baseline: { label: 'L0', episodeId: episodeId('L0'), bundle: () => Promise.resolve(pair.baseline) },
  };
}

/** An external judge on a scripted server's `judge` model: no retry, greedy, a verdict's length. */
export function scriptedJudge(name: string, baseUrl: string): ServedJudge {
  return {
    name,
    model: new OpenAICompatibleModel({ baseUrl, retry: { maxAttempts: 1 } }),
    modelName: 'judge',
    sampling: { temperature: 0, maxTokens: 100 },
    standIn: null,
  };
}
