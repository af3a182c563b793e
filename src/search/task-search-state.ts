import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { buildWorkspaceBundle, type BundleBudget, type WorkspaceBundle } from '../judge/bundle.js';
import type { PairwiseComparison } from '../records/optimizer-history.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import type { LoadedTask } from '../tasks/load-task.js';
import type { TeamDesign } from '../workflow/workflow.js';
import type { SearchContext } from './search-context.js';
import type { SearchEpisode } from '../records/search-records.js';
import { searchVersionFiles } from '../store/run-paths.js';

/** A version of the team's design and its run; the reference has no design. */
export interface Version {
  label: string;
  design: TeamDesign | null;
  episode: SearchEpisode | null;
}

/**
 * What one task's search knows as it goes: the versions run so far, the comparisons the optimizer reads, why each
 * champion won. Rebuilt from the run store's step outputs on a resumed search.
 */
export class TaskSearchState {
  readonly id: string;
  /** `search/<generation>/<task>`: the prefix of its step keys and its folder in the run directory. */
  readonly base: string;
  readonly versions = new Map<string, Version>();
  readonly history: PairwiseComparison[] = [];
  /** Why each champion won its place, for the optimizer's "previous best". */
  readonly promotionRationale = new Map<string, string>();
  private readonly bundles = new Map<string, Promise<WorkspaceBundle>>();

  constructor(
    readonly context: SearchContext,
    readonly task: LoadedTask,
  ) {
    this.id = task.manifest.id;
    this.base = `search/${context.generation}/${this.id}`;
  }

  version(label: string): Version {
    return this.versions.get(label)!;
  }

  /** The workspace bundle of a version's run, built once per budget and options. */
  bundle(
    label: string,
    budget?: Partial<BundleBudget>,
    options: { runSummary?: boolean } = {},
  ): Promise<WorkspaceBundle> {
    const key =
      budget || options.runSummary !== undefined
        ? `${label}#${JSON.stringify(budget ?? {})}#${options.runSummary ?? true}`
        : label;
    let bundle = this.bundles.get(key);
    if (!bundle) {
      const episode = this.version(label).episode!;
      bundle = buildWorkspaceBundle({
        task: this.task,
        location: this.context.run.path(episode.dir),
        tokenCounter: this.context.tokenCounter,
        budget: { ...this.context.settings.bundleBudget, ...budget },
        runSummary: options.runSummary,
      });
      this.bundles.set(key, bundle);
    }
    return bundle;
  }

  /** `search/<generation>/<task>/<version>/workflow.json`. */
  async writeDesign(version: string, design: TeamDesign): Promise<void> {
    const path = this.context.run.path(this.base, version, searchVersionFiles.workflow);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFileAtomic(path, `${JSON.stringify(design, null, 2)}\n`);
  }
}
