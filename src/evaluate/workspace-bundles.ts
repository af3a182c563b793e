import { buildWorkspaceBundle, type WorkspaceBundle } from '../judge/bundle.js';
import type { TokenCounter } from '../model/token-counter.js';
import type { LoadedTask } from '../tasks/load-task.js';

/** An episode's workspace as the judges see it, built once however many judgments read it. */
export type BundleOf = (
  task: LoadedTask,
  episode: { episodeId: string; location: string },
) => Promise<WorkspaceBundle>;

/** A study's bundles: each episode's (by id, `location` its folder) built at first use and kept. */
export function workspaceBundles(tokenCounter: TokenCounter): BundleOf {
  const bundles = new Map<string, Promise<WorkspaceBundle>>();
  return (task, episode) => {
    let bundle = bundles.get(episode.episodeId);
    if (!bundle) {
      bundle = buildWorkspaceBundle({ task, location: episode.location, tokenCounter });
      bundles.set(episode.episodeId, bundle);
    }
    return bundle;
  };
}
