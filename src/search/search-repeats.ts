import type { z } from 'zod';

import { buildWorkspaceBundle, type WorkspaceBundle } from '../judge/bundle.js';
import { searchRepeatsPath } from '../store/run-paths.js';
import { noiseFigures } from '../records/noise-figures.js';
import { playRuleOnRuns, type JudgedRun } from './repeat-matches.js';
import {
  PromotionReplay,
  SelfComparison,
  TaskRepeatsRecord,
  type PromotionRerun,
  type RepeatRun,
  type TaskRepeats,
} from '../records/repeat-records.js';
import { repeatRunLabel, repeatSeed, repeatStepBase } from './repeat-runs.js';
import { searchEpisode } from './search-episode.js';
import type { SearchDecision } from '../records/search-records.js';
import { type TaskSearchState } from './task-search-state.js';
import { REFERENCE } from '../records/search-records.js';

/** Thrown into the work still waiting to start once the search has stopped; never reported. */
class RepeatsStopped extends Error {}

/**
 * The search's noise, measured beside it (`search.repeats: k`; docs/search.md, "Search noise: Figure 8"): the bare
 * reference and each new champion are run k more times unchanged, each rerun with its own seed (`repeat-runs.ts`),
 * and the runs are judged by the search's own judge under its own champion rule: every two runs of one design against
 * each other (a spurious promotion when the rule would pick the later), and each champion change played again on the
 * reruns of both designs (run i against run i).
 *
 * Nothing the search decides or reads comes from here: the search only tells this what it decided, after deciding,
 * and goes on without waiting; the reruns share its episode and judge slots and nothing else. Every rerun, comparison
 * and replay is a step of the run store, so a stopped search resumes them without redoing the finished ones.
 */
export class SearchRepeats {
  /** Each design's reruns 1 … k, each its own step: a comparison waits only for the runs it judges. */
  private readonly runs = new Map<string, Array<Promise<RepeatRun>>>();
  private readonly selfComparisons: Array<Promise<SelfComparison>> = [];
  private readonly promotions: Array<Promise<PromotionRerun>> = [];
  private readonly bundles = new Map<string, Promise<WorkspaceBundle>>();
  /** Every rerun and judgment step started and not yet settled: what `stop` waits for. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;

  /** Null when the search measures no noise (`repeats` 0 or unset). */
  static for(search: TaskSearchState): SearchRepeats | null {
    const count = search.context.settings.repeats ?? 0;
    return count > 0 ? new SearchRepeats(search, count) : null;
  }

  private constructor(
    private readonly search: TaskSearchState,
    private readonly count: number,
  ) {}

  /**
   * What the search decided for one version: after v0's decision the reference is rerun (the first champion), and a
   * promoted version is rerun and its promotion replayed. Starts the work and returns at once.
   */
  decided(decision: SearchDecision): void {
    if (decision.version === 'v0') this.measure(REFERENCE);
    if (!decision.promoted) return;
    this.measure(decision.version);
    this.promotions.push(this.background(this.replayPromotion(decision)));
  }

  /** Waits for every rerun and judgment started, then writes and returns `repeats.json`. */
  async finish(): Promise<TaskRepeats> {
    const [runs, selfComparisons, promotions] = await Promise.all([
      Promise.all([...this.runs.values()].flat()),
      Promise.all(this.selfComparisons),
      Promise.all(this.promotions),
    ]);
    const { context, id } = this.search;
    const { settings, generation } = context;
    const record: TaskRepeats = {
      generation,
      task: id,
      repeats: this.count,
      championRule: settings.championRule,
      judgeMode: settings.judgeMode,
      seed: settings.seed,
      designs: [...this.runs.keys()],
      runs,
      selfComparisons,
      promotions,
      figures: noiseFigures({ selfComparisons, promotions }),
    };
    await TaskRepeatsRecord.write(context.run.path(searchRepeatsPath(generation, id)), record);
    return record;
  }

  /**
   * The search stopped, or a rerun failed: nothing new starts, and the steps under way are waited for, so none is
   * left running; the next search resumes them.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** The design's k reruns, and every two of its k + 1 runs judged against each other, the later as the candidate. */
  private measure(design: string): void {
    if (this.runs.has(design)) return;
    const reruns = this.indices().map((index) => this.background(this.rerun(design, index)));
    this.runs.set(design, reruns);
    const runs: Array<Promise<JudgedRun>> = [Promise.resolve(this.ownRun(design)), ...reruns];
    for (let candidate = 1; candidate < runs.length; candidate++) {
      for (let incumbent = 0; incumbent < candidate; incumbent++) {
        const comparison = this.judgeSelf(design, candidate, incumbent, runs[candidate]!, runs[incumbent]!);
        this.selfComparisons.push(this.background(comparison));
      }
    }
  }

  private async rerun(design: string, index: number): Promise<RepeatRun> {
    this.assertRunning();
    const { search } = this;
    const episode = await this.track(searchEpisode(search, design, search.version(design).design, index));
    return {
      design,
      index,
      label: repeatRunLabel(design, index),
      seed: repeatSeed(search.context.settings.seed, index),
      episode,
    };
  }

  /** Run `candidate` of a design against its run `incumbent` (0: the search's own), as the rule would play them. */
  private async judgeSelf(
    design: string,
    candidate: number,
    incumbent: number,
    candidateRun: Promise<JudgedRun>,
    incumbentRun: Promise<JudgedRun>,
  ): Promise<SelfComparison> {
    const runs = await Promise.all([candidateRun, incumbentRun]);
    const [challenger, holder] = runs;
    const key = `${repeatStepBase(this.search.base, design, candidate)}/against-${incumbent}`;
    return this.step(key, SelfComparison, async () => {
      const state = { referenceId: holder.label, championId: holder.label };
      const outcome = await playRuleOnRuns(this.search, this.bundle, runs, state, challenger);
      return { design, candidate, incumbent, match: outcome.matches[0]!, promoted: outcome.promoted };
    });
  }

  /** The champion change of `decision` played again on each rerun index, every design's run i against run i. */
  private async replayPromotion(decision: SearchDecision): Promise<PromotionRerun> {
    const { version, championBefore } = decision;
    const replays = this.indices().map(async (index) => {
      const at = (design: string) => this.runs.get(design)![index - 1]!;
      const runs = await Promise.all([at(version), at(championBefore), at(REFERENCE)]);
      const [candidate, champion, reference] = runs;
      return this.step(
        `${repeatStepBase(this.search.base, version, index)}/replay`,
        PromotionReplay,
        async () => {
          const state = { referenceId: reference.label, championId: champion.label };
          return { index, ...(await playRuleOnRuns(this.search, this.bundle, runs, state, candidate)) };
        },
      );
    });
    return { version, championBefore, original: decision.matches, replays: await Promise.all(replays) };
  }

  /** A step of the run store, not started once the search has stopped. */
  private async step<Schema extends z.ZodType>(
    key: string,
    output: Schema,
    fn: () => Promise<z.input<Schema>>,
  ): Promise<z.output<Schema>> {
    this.assertRunning();
    return this.track(this.search.context.run.step(key, fn, { output }));
  }

  /** Counts `work` as under way until it settles. */
  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const settled = () => this.inFlight.delete(work);
    work.then(settled, settled);
    return work;
  }

  /** The search's own run of a design: run 0. */
  private ownRun(design: string): JudgedRun {
    return { label: repeatRunLabel(design, 0), episode: this.search.version(design).episode! };
  }

  /** The workspace bundle the judge sees of a run: the search's own for run 0, else built once per rerun. */
  private readonly bundle = (run: JudgedRun): Promise<WorkspaceBundle> => {
    const { search } = this;
    // Run 0 is the search's own run, named as its version; rerun labels (`v3-r1`) name no version.
    if (search.versions.has(run.label)) return search.bundle(run.label);
    let bundle = this.bundles.get(run.label);
    if (!bundle) {
      const { context, task } = search;
      bundle = buildWorkspaceBundle({
        task,
        location: context.run.path(run.episode.dir),
        tokenCounter: context.tokenCounter,
        budget: { ...context.settings.bundleBudget },
      });
      this.bundles.set(run.label, bundle);
    }
    return bundle;
  };

  private indices(): number[] {
    return Array.from({ length: this.count }, (_, position) => position + 1);
  }

  private assertRunning(): void {
    if (this.stopped) throw new RepeatsStopped('the search stopped');
  }

  /** Work that runs on its own: its failure is kept for `finish`, never left unhandled. */
  private background<T>(work: Promise<T>): Promise<T> {
    work.catch(() => {});
    return work;
  }
}
