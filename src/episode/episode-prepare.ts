import { mkdir, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';

import { prepareQwenCode, type QwenCodeInstallation } from '../harness/launch-qwen-code.js';
import { DEFAULT_HARNESS_PROFILE, type HarnessProfile } from '../harness/qwen-settings.js';
import { episodePath } from '../store/run-paths.js';
import type { ProtectedAssetDigest } from '../tasks/integrity.js';
import { loadTask, type LoadedTask } from '../tasks/load-task.js';
import { materializeWorkspace } from '../tasks/materialize.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';
import type { EpisodeNetwork } from '../tasks/task-network.js';
import { renderWorkflow } from '../workflow/render.js';
import { prepareEpisodeDirectory } from './episode-directory.js';
import { episodePrompt } from './prompt.js';
import type { EpisodeOptions } from './episode-spec.js';

/** What the prepare phase leaves for the others: the task, its workspace, the prompt and the harness to run. */
export interface PreparedEpisode {
  outDir: string;
  episodeId: string;
  startedAt: Date;
  task: LoadedTask;
  /** What the agents may reach beyond the model: the options' network, else the task's. */
  network: EpisodeNetwork;
  workspaceDir: string;
  /** The protected assets' digests as copied (none when the task's files live in a trial's environment). */
  protectedAssets: ProtectedAssetDigest[];
  prompt: string;
  qwenCode: QwenCodeInstallation;
  profile: HarnessProfile;
  /** A progress line, prefixed with the episode's id. */
  log(message: string): void;
}

/**
 * The prepare phase: a clean episode directory, the task loaded, its workspace made for the data seed (or left empty
 * when the task's files live in a trial's environment), the prompt written, and the harness made ready (guarded when
 * it runs isolated).
 */
export async function prepareEpisode(options: EpisodeOptions, outDir: string): Promise<PreparedEpisode> {
  const episodeId = basename(outDir);
  const log = (message: string) => options.log?.(`episode ${episodeId}: ${message}`);
  await prepareEpisodeDirectory(outDir, log);
  const startedAt = new Date();
  const task = await loadTask(options.taskDir);
  const network: EpisodeNetwork = options.network ?? task.manifest.environment.network;
  const workspaceDir = episodePath(outDir, 'workspace');
  let protectedAssets: ProtectedAssetDigest[] = [];
  if (options.environment === undefined) {
    ({ protectedAssets } = await materializeWorkspace(task, { seed: dataSeed(options), workspaceDir }));
  } else {
    await mkdir(workspaceDir, { recursive: true });
  }
  const prompt = episodePrompt({
    task: renderTaskPrompt(task, network),
    workflow: options.workflow ? renderWorkflow(options.workflow) : undefined,
    teacher: options.teacher,
    teacherDirective: task.teacherDirective ?? undefined,
  });
  await writeFile(episodePath(outDir, 'prompt'), prompt);
  const qwenCode = await prepareQwenCode({
    node: options.harnessNode,
    guarded: (options.sandbox ?? 'bubblewrap') === 'bubblewrap',
  });
  return {
    outDir,
    episodeId,
    startedAt,
    task,
    network,
    workspaceDir,
    protectedAssets,
    prompt,
    qwenCode,
    profile: options.harnessProfile ?? DEFAULT_HARNESS_PROFILE,
    log,
  };
}

/** The data seed of an episode: the options' own, else the sampling seed. */
export function dataSeed(options: EpisodeOptions): number {
  return options.dataSeed ?? options.seed;
}
