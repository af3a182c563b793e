import { mkdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';

import { buildWorkspaceBundle, type BundleBudget, type WorkspaceBundle } from '../judge/bundle.js';
import { PairwiseJudgmentRecord, type PairwiseJudgment } from '../judge/judgment-record.js';
import { judgePair } from '../judge/pairwise-judge.js';
import type { Semaphore } from '../model/concurrency.js';
import { isTransportFailure } from '../model/retry.js';
import { errorMessage } from '../errors.js';
import type { TokenCounter } from '../model/token-counter.js';
import type { ChatModel, SamplingParams } from '../model/types.js';
import { executionMetadata } from '../optimizer/execution-metadata.js';
import type { PairwiseComparison } from '../optimizer/history.js';
import { OptimizerCallRecord } from '../optimizer/optimizer-outcome.js';
import { proposeWorkflow } from '../optimizer/propose-workflow.js';
import { taskDataSeed, type DataSeeds } from '../config/data-seeds.js';
import type { EpisodeSettings } from '../config/episode-settings.js';
import { localEpisodeBackend, type EpisodeBackend } from '../queue/episode-backend.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import type { Run } from '../store/run-store.js';
import { loadTask, type LoadedTask } from '../tasks/load-task.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';
import type { Workflow } from '../workflow/workflow.js';
import {
  decideChampion,
  initialChampionState,
  type ChampionRule,
  type ChampionState,
  type MatchResult,
} from './champion.js';
import {
  SearchDecision,
  SearchEpisode,
  SearchProposal,
  TaskSearchRecord,
  type ChampionMatch,
  type SearchIteration,
  type TaskSearchResult,
} from './search-records.js';
import type { OutageGate } from './outage-gate.js';
import type { SearchProgressEvent } from './search-progress.js';
import { maxChangeFraction, type Stabiliser } from './stabiliser.js';

/** A role played through a chat endpoint: the judge or the optimizer. */
export interface RoleModel {
  model: ChatModel;
  /** The name the server serves the model under. */
  modelName: string;
  sampling: SamplingParams;
}

/** Where the team's episodes send their calls (each through its own recording proxy). */
export interface ExecutorEndpoint {
  model: string;
  baseUrl: string;
  apiKey?: string;
  /** The variable the key came from: what a queue sends its workers instead of the key. */
  apiKeyEnv?: string;
}

export interface SearchSettings {
  /** Optimizer iterations after v0 (the paper: 11, giving v0..v11). */
  iterations: number;
  championRule: ChampionRule;
  judgeMode: 'random' | 'both';
  judgeRepairAttempts: number;
  optimizerRepairAttempts: number;
  stabiliser?: Stabiliser;
  /** The sampling seed of every episode of the search (and of the judge's A/B orders). */
  seed: number;
  /** Each task's data seed: every version of a task works on the same data, so the designs are what differs. */
  dataSeeds: DataSeeds;
  episode: EpisodeSettings;
  bundleBudget?: Partial<BundleBudget>;
  /** Tokens of workspace evidence shown to the optimizer (default 8,000). */
  evidenceTokens?: number;
  /** How long the search waits for a model server that stays down, and how often it asks (default 900 s, 5 s). */
  outages?: { budgetSeconds: number; probeSeconds: number };
}

export interface SearchContext {
  run: Run<unknown>;
  /** The generation whose weights play every role (`L0`, `L1`…); part of every step key and episode id. */
  generation: string;
  executor: ExecutorEndpoint;
  judge: RoleModel;
  optimizer: RoleModel;
  settings: SearchSettings;
  tokenCounter: TokenCounter;
  /** Shared by every task of the search: episodes and judge calls running at once. */
  episodeSlots: Semaphore;
  judgeSlots: Semaphore;
  hiddenDirectories?: string[];
  /** Where the episodes run (default: in this process). */
  episodes?: EpisodeBackend;
  /** Shared by every task: work lost while the model server is down waits here and is redone. */
  outages: OutageGate;
  onProgress?: (event: SearchProgressEvent) => void;
}

const REFERENCE = 'reference';
const DEFAULT_EVIDENCE_TOKENS = 8_000;

/**
 * The inner loop for one task (MASS.md §3): a bare-task reference run and v0 (the task's own design), then
 * `iterations` rounds of optimizer → episode → judge, the champion kept by the configured rule. Every episode,
 * proposal and judgment is a step of the run store, so a search killed at any moment resumes where it stopped and
 * never redoes a finished step. Everything lands under `search/<generation>/<task>/`, and the result also in
 * `result.json` there.
 */
export async function searchTask(context: SearchContext, taskDir: string): Promise<TaskSearchResult> {
  return new TaskSearch(context, await loadTask(taskDir)).run();
}

interface Version {
  label: string;
  design: Workflow | null;
  episode: SearchEpisode | null;
}

class TaskSearch {
  private readonly id: string;
  private readonly base: string;
  private readonly versions = new Map<string, Version>();
  private readonly bundles = new Map<string, Promise<WorkspaceBundle>>();
  private readonly history: PairwiseComparison[] = [];
  /** Why each champion won its place, for the optimizer's "previous best". */
  private readonly promotionRationale = new Map<string, string>();

  constructor(
    private readonly context: SearchContext,
    private readonly task: LoadedTask,
  ) {
    this.id = task.manifest.id;
    this.base = `search/${context.generation}/${this.id}`;
  }

  async run(): Promise<TaskSearchResult> {
    const { settings } = this.context;
    const v0 = this.task.manifest.workflow;
    await this.writeDesign('v0', v0);
    const [reference, v0Episode] = await Promise.all([this.episode(REFERENCE, null), this.episode('v0', v0)]);
    this.versions.set(REFERENCE, { label: REFERENCE, design: null, episode: reference });
    this.versions.set('v0', { label: 'v0', design: v0, episode: v0Episode });

    let state = initialChampionState(REFERENCE);
    const iterations: SearchIteration[] = [];
    const championHistory: TaskSearchResult['championHistory'] = [];
    let current = 'v0';
    for (let index = 0; index <= settings.iterations; index++) {
      const version = `v${index}`;
      const bound = index === 0 ? undefined : maxChangeFraction(settings.stabiliser, index);
      let proposal: SearchProposal | null = null;
      if (index > 0) {
        proposal = await this.propose(version, current, state, bound);
        if (!proposal.ok) {
          iterations.push({
            version,
            proposal,
            episode: null,
            decision: null,
            maxChangeFraction: bound ?? null,
          });
          championHistory.push({ version, champion: state.championId });
          continue;
        }
        const episode = await this.episode(version, proposal.design);
        this.versions.set(version, { label: version, design: proposal.design, episode });
      }
      const episode = this.versions.get(version)!.episode!;
      const decision = await this.decide(version, state);
      state = { referenceId: REFERENCE, championId: decision.championAfter };
      this.history.push(...decision.comparisons);
      if (decision.promoted) {
        const rationale = decision.matches.at(-1)?.rationale;
        if (rationale) this.promotionRationale.set(version, rationale);
        this.context.onProgress?.({ kind: 'champion', task: this.id, version, champion: version });
      }
      iterations.push({ version, proposal, episode, decision, maxChangeFraction: bound ?? null });
      championHistory.push({ version, champion: state.championId });
      current = version;
    }

    const resultFile = `${this.base}/result.json`;
    const result = await this.context.run.step(
      `${this.base}/result`,
      async () => {
        const summary = this.result(reference, state, iterations, championHistory);
        await TaskSearchRecord.write(this.context.run.path(resultFile), summary);
        return summary;
      },
      { output: TaskSearchRecord.schema, produces: [resultFile] },
    );
    this.context.onProgress?.({
      kind: 'task-finished',
      task: this.id,
      champion: result.champion,
      beatsReference: result.beatsReference,
    });
    return result;
  }

  private async episode(version: string, design: Workflow | null): Promise<SearchEpisode> {
    const { run, generation, executor, settings } = this.context;
    let ran = false;
    const episode = await run.step(
      `${this.base}/${version}/episode`,
      async () => {
        ran = true;
        const episodeId = `${generation}-${this.id}-${version}`;
        const outDir = run.path('episodes', episodeId);
        const { outages } = this.context;
        let record;
        for (;;) {
          await outages.ready();
          const release = await this.context.episodeSlots.acquire();
          this.context.onProgress?.({ kind: 'episode-started', task: this.id, version });
          try {
            ({ record } = await (this.context.episodes ?? localEpisodeBackend).run({
              stepKey: `${this.base}/${version}/episode`,
              apiKeyEnv: executor.apiKeyEnv,
              options: {
                ...settings.episode,
                taskDir: this.task.dir,
                workflow: design ?? undefined,
                model: executor.model,
                baseUrl: executor.baseUrl,
                apiKey: executor.apiKey,
                seed: settings.seed,
                dataSeed: taskDataSeed(settings.dataSeeds, this.id),
                outDir,
                hiddenDirectories: this.context.hiddenDirectories,
              },
            }));
          } finally {
            release();
          }
          if (record.failure?.cause !== 'server_unavailable') break;
          // The server stayed down past the calls' retries: the run says nothing about the design. Redone later.
          const error = `${record.failure.kind}: ${record.failure.detail}`;
          this.context.onProgress?.({
            kind: 'lost-to-outage',
            task: this.id,
            version,
            what: 'episode',
            error,
          });
          await outages.lostToOutage(`episode ${episodeId}`, error);
          await rm(outDir, { recursive: true, force: true });
        }
        outages.succeeded();
        this.context.onProgress?.({
          kind: 'episode-finished',
          task: this.id,
          version,
          ok: record.status === 'success',
        });
        return {
          episodeId,
          dir: relative(run.directory, outDir),
          status: record.status,
          reason: record.failure
            ? `${record.failure.kind}${record.failure.cause ? ` (${record.failure.cause})` : ''}: ${record.failure.detail}`
            : null,
          execution: executionMetadata(record),
        };
      },
      { output: SearchEpisode },
    );
    if (!ran) {
      this.context.onProgress?.({
        kind: 'episode-finished',
        task: this.id,
        version,
        ok: episode.status === 'success',
        resumed: true,
      });
    }
    return episode;
  }

  private async propose(
    version: string,
    current: string,
    state: ChampionState,
    bound: number | undefined,
  ): Promise<SearchProposal> {
    const { run, optimizer, settings } = this.context;
    const proposal = await run.step(
      `${this.base}/${version}/proposal`,
      async (): Promise<SearchProposal> => {
        const base = this.versions.get(current)!;
        const champion = this.versions.get(state.championId)!;
        const evidence = base.episode
          ? await this.bundle(current, { totalTokens: settings.evidenceTokens ?? DEFAULT_EVIDENCE_TOKENS })
          : undefined;
        const outcome = await this.throughOutages('optimizer', version, () =>
          proposeWorkflow(
            optimizer.model,
            {
              task: { id: this.id, prompt: renderTaskPrompt(this.task) },
              current: { label: current, design: base.design! },
              // Always the champion, the bare-task reference included: without it the prompt cannot say what won.
              previousBest: {
                label: champion.label,
                design: champion.design,
                rationale: this.promotionRationale.get(champion.label) ?? '',
              },
              original: this.task.manifest.workflow,
              workspaceEvidence: evidence?.text,
              execution: base.episode?.execution,
              history: this.history,
            },
            {
              modelName: optimizer.modelName,
              sampling: optimizer.sampling,
              repairAttempts: settings.optimizerRepairAttempts,
              maxChangeFraction: bound,
            },
          ),
        );
        await OptimizerCallRecord.write(run.path(this.base, version, 'optimizer.json'), {
          taskId: this.id,
          currentLabel: current,
          outcome,
        });
        if (!outcome.ok) {
          return { ok: false, reason: outcome.reason, errors: outcome.errors, basedOn: current };
        }
        await this.writeDesign(version, outcome.proposal.design);
        return {
          ok: true,
          design: outcome.proposal.design,
          changeFraction: outcome.changeFraction,
          basedOn: current,
        };
      },
      { output: SearchProposal },
    );
    this.context.onProgress?.({ kind: 'proposal', task: this.id, version, ok: proposal.ok });
    return proposal;
  }

  private async decide(version: string, state: ChampionState): Promise<SearchDecision> {
    const { run, settings } = this.context;
    const candidate = this.versions.get(version)!;
    return run.step(
      `${this.base}/${version}/judge`,
      async () => {
        const judged: Array<{ first: string; second: string; judgment: PairwiseJudgment; path: string }> = [];
        const compare = async (first: string, second: string): Promise<MatchResult> => {
          const judgment = await this.judge(version, first, second);
          const path = run.path(this.base, version, 'judgments', `${first}-vs-${second}.json`);
          await mkdir(join(path, '..'), { recursive: true });
          await PairwiseJudgmentRecord.write(path, judgment);
          judged.push({ first, second, judgment, path });
          this.context.onProgress?.({
            kind: 'judgment',
            task: this.id,
            version,
            result:
              judgment.winner === null
                ? 'failed'
                : judgment.winner === 'tie'
                  ? 'tie'
                  : `${judgment.winner === 'x' ? first : second} won`,
          });
          if (judgment.status === 'failed') return 'failed';
          return judgment.winner === 'x' ? 'first' : judgment.winner === 'y' ? 'second' : 'tie';
        };
        const decision = await decideChampion(
          settings.championRule,
          state,
          { id: version, failed: candidate.episode?.status !== 'success' },
          compare,
        );
        const matches: ChampionMatch[] = decision.matches.map((match) => {
          const record = judged.find((entry) => entry.first === match.first && entry.second === match.second);
          return {
            ...match,
            rationale: record
              ? rationaleOf(record.judgment)
              : match.result === 'walkover'
                ? `the candidate's run failed (${candidate.episode?.reason ?? 'unknown reason'}), so it lost without a judgment`
                : null,
            judgment: record ? relative(run.directory, record.path) : null,
          };
        });
        return {
          version,
          championBefore: state.championId,
          championAfter: decision.state.championId,
          promoted: decision.promoted,
          matches,
          comparisons: matches.flatMap((match) => this.comparison(match, judged)),
        };
      },
      { output: SearchDecision },
    );
  }

  /** A match in the optimizer's terms; a failed judgment teaches nothing and is left out. */
  private comparison(
    match: ChampionMatch,
    judged: ReadonlyArray<{ first: string; second: string; judgment: PairwiseJudgment }>,
  ): PairwiseComparison[] {
    if (match.result === 'failed') return [];
    const candidate = this.versions.get(match.first)!;
    const opponent = this.versions.get(match.second)!;
    const judgment = judged.find(
      (entry) => entry.first === match.first && entry.second === match.second,
    )?.judgment;
    // The candidate is x (the match's first); each judgment says whether x was shown as A.
    const shownAs = (single: PairwiseJudgment['judgments'][number]): 'A' | 'B' =>
      single.shownAsA === 'x' ? 'A' : 'B';
    const single = judgment?.mode === 'random' ? judgment.judgments[0] : undefined;
    const orders =
      judgment?.mode === 'both'
        ? judgment.judgments.flatMap((order) =>
            order.verdict ? [{ candidatePosition: shownAs(order), rationale: order.verdict.rationale }] : [],
          )
        : [];
    return [
      {
        candidate: { label: candidate.label, design: candidate.design },
        opponent: { label: opponent.label, design: opponent.design },
        winner: match.result === 'first' ? 'candidate' : match.result === 'tie' ? 'tie' : 'opponent',
        rationale: match.rationale ?? '',
        candidatePosition: single ? shownAs(single) : undefined,
        ...(orders.length > 0 ? { orders } : {}),
        candidateExecution: candidate.episode?.execution,
      },
    ];
  }

  private async judge(version: string, first: string, second: string): Promise<PairwiseJudgment> {
    const { judge, settings } = this.context;
    const [x, y] = await Promise.all([this.bundle(first), this.bundle(second)]);
    return this.throughOutages(`judge ${first} vs ${second}`, version, async () => {
      const release = await this.context.judgeSlots.acquire();
      try {
        return await judgePair({
          task: this.task,
          x: { label: first, bundle: x },
          y: { label: second, bundle: y },
          model: judge.model,
          modelName: judge.modelName,
          mode: settings.judgeMode,
          seed: settings.seed,
          orderKey: `${this.base}/${first}/${second}`,
          sampling: judge.sampling,
          maxRepairAttempts: settings.judgeRepairAttempts,
        });
      } finally {
        release();
      }
    });
  }

  /**
   * A judge or optimizer call that waits out outages: a transport failure that outlasted the call's retries is
   * recorded and the call redone once the server answers again (see `OutageGate`); it never becomes a result.
   */
  private async throughOutages<T>(what: string, version: string, call: () => Promise<T>): Promise<T> {
    const { outages } = this.context;
    for (;;) {
      await outages.ready();
      let failure: unknown;
      try {
        const result = await call();
        outages.succeeded();
        return result;
      } catch (error) {
        if (!isTransportFailure(error)) throw error;
        failure = error;
      }
      const error = errorMessage(failure);
      this.context.onProgress?.({ kind: 'lost-to-outage', task: this.id, version, what, error });
      await outages.lostToOutage(`${what} (${this.base}/${version})`, error);
    }
  }

  private bundle(label: string, budget?: Partial<BundleBudget>): Promise<WorkspaceBundle> {
    const key = budget ? `${label}#${JSON.stringify(budget)}` : label;
    let bundle = this.bundles.get(key);
    if (!bundle) {
      const episode = this.versions.get(label)!.episode!;
      bundle = buildWorkspaceBundle({
        task: this.task,
        location: this.context.run.path(episode.dir),
        tokenCounter: this.context.tokenCounter,
        budget: { ...this.context.settings.bundleBudget, ...budget },
      });
      this.bundles.set(key, bundle);
    }
    return bundle;
  }

  private async writeDesign(version: string, design: Workflow): Promise<void> {
    const path = this.context.run.path(this.base, version, 'workflow.json');
    await mkdir(join(path, '..'), { recursive: true });
    await writeFileAtomic(path, `${JSON.stringify(design, null, 2)}\n`);
  }

  private result(
    reference: SearchEpisode,
    state: ChampionState,
    iterations: SearchIteration[],
    championHistory: TaskSearchResult['championHistory'],
  ): TaskSearchResult {
    const { generation, settings } = this.context;
    const champion = this.versions.get(state.championId)!;
    const judgments = iterations.flatMap((iteration) =>
      (iteration.decision?.matches ?? []).filter((match) => match.judgment !== null),
    );
    const episodes = [
      reference,
      ...iterations.flatMap((iteration) => (iteration.episode ? [iteration.episode] : [])),
    ];
    return {
      generation,
      task: this.id,
      championRule: settings.championRule,
      judgeMode: settings.judgeMode,
      reference,
      champion: state.championId,
      championDesign: champion.design,
      championEpisode: champion.episode?.episodeId ?? null,
      beatsReference: state.championId !== REFERENCE,
      championHistory,
      iterations,
      counts: {
        episodes: episodes.length,
        failedEpisodes: episodes.filter((episode) => episode.status !== 'success').length,
        judgments: judgments.length,
        failedJudgments: judgments.filter((match) => match.result === 'failed').length,
        failedProposals: iterations.filter((iteration) => iteration.proposal?.ok === false).length,
      },
    };
  }
}

function rationaleOf(judgment: PairwiseJudgment): string | null {
  const rationales = judgment.judgments.flatMap((single) =>
    single.verdict ? [single.verdict.rationale] : [],
  );
  if (rationales.length === 0) return judgment.failure;
  if (rationales.length === 1) return rationales[0]!;
  return rationales.map((text, index) => `Order ${index + 1}: ${text}`).join('\n');
}
