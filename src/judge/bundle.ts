import type { TokenCounter } from '../model/token-counter.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';
import { renderSections, type BundleEvidence } from './bundle-evidence-sections.js';
import { FileReader, type FileExcerpt, type RenderedSection } from './bundle-sections.js';
import { unwrapTaskCopies } from './delegation-ask.js';
import { shrinkToTokens } from './excerpt.js';
import { assignFileRoles, orderImportsAfterEntryPoint } from './file-roles.js';
import { hostPathRedactor } from './host-paths.js';
import { inspectIntegrity } from './integrity-findings.js';
import { DEFAULT_BUNDLE_BUDGET } from './judge-defaults.js';
import { balanceAgentTextMarks, countAgentTextMarks, markJudgeDirectedText } from './judge-directed-text.js';
import { runPreflight } from './preflight.js';
import { readDelegations, readEpisodeEgress } from './process-evidence.js';
import { listWorkspace } from './workspace-files.js';
import { locateWorkspace, type WorkspaceSource } from './workspace-source.js';
import { BundleSummary } from '../records/bundle-summary.js';

/** Token budgets of a bundle, counted with the judge model's tokenizer. Sections are cut to theirs, then the whole. */
export interface BundleBudget {
  /** The whole rendered bundle; the sections below are scaled down together until it fits. */
  totalTokens: number;
  preflightTokens: number;
  integrityTokens: number;
  treeTokens: number;
  /** Most files listed in the tree. */
  treeEntries: number;
  /** Samples of the task's input data together; each file at most `dataFileTokens`. */
  dataTokens: number;
  dataFileTokens: number;
  reportTokens: number;
  /** Metrics, ablation and other result files together; each file at most `resultFileTokens`. */
  resultsTokens: number;
  resultFileTokens: number;
  /** Entry point, imported modules, tests, other code together; each file at most `codeFileTokens`. */
  codeTokens: number;
  codeFileTokens: number;
  /** Run summary, delegations and the team's own logs together. */
  processTokens: number;
}

/** What the judge sees of one workspace: rendered Markdown without a label (the prompt names it A or B). */
export interface WorkspaceBundle {
  text: string;
  tokens: number;
  summary: BundleSummary;
  /** The file excerpts `text` holds, so that a judgment can show a file both workspaces share once. */
  excerpts: FileExcerpt[];
}

export interface BuildBundleOptions {
  task: LoadedTask;
  /** An episode directory, a workspace folder, or an already located source. */
  location: string | WorkspaceSource;
  tokenCounter: TokenCounter;
  budget?: Partial<BundleBudget>;
  /**
   * Whether the process evidence opens with the run's outcome and counts (default true). The optimizer, shown the
   * same figures in its execution record, gets the bundle without them.
   */
  runSummary?: boolean;
}

const MAX_FIT_ROUNDS = 5;

/**
 * Builds the evidence bundle of one workspace. Deterministic: the same workspace and budget give the same text. Never
 * fails for size: evidence is cut (head and tail with a marker) until the whole fits `totalTokens`.
 */
export async function buildWorkspaceBundle(options: BuildBundleOptions): Promise<WorkspaceBundle> {
  const budget = { ...DEFAULT_BUNDLE_BUDGET, ...options.budget };
  const counter = memoizedCounter(options.tokenCounter);
  const source =
    typeof options.location === 'string' ? await locateWorkspace(options.location) : options.location;
  const root = source.workspaceDir;
  const { manifest } = options.task;

  const listing = await listWorkspace(root);
  const preflight = await runPreflight(root, manifest.deliverables, listing);
  const integrity = await inspectIntegrity(options.task, root, listing, source.episode);
  const redact = hostPathRedactor([
    { path: root, placeholder: '<workspace>' },
    ...(source.episodeDir ? [{ path: source.episodeDir, placeholder: '<episode>' }] : []),
  ]);
  const taskText = renderTaskPrompt(options.task);
  const delegations = source.episodeDir
    ? (await readDelegations(source.episodeDir))?.map((delegation) => ({
        ...delegation,
        prompt: redact(markJudgeDirectedText(unwrapTaskCopies(delegation.prompt, taskText))),
        result: delegation.result === null ? null : redact(markJudgeDirectedText(delegation.result)),
      }))
    : undefined;
  const egress = source.episodeDir ? await readEpisodeEgress(source.episodeDir, source.episode) : undefined;
  const reader = new FileReader(
    root,
    new Map(listing.entries.map((entry) => [entry.path, entry.size])),
    redact,
  );
  let roles = assignFileRoles(manifest, listing.entries);
  const { entryPoint } = roles;
  if (entryPoint) {
    const read = await reader.read(entryPoint);
    if (read.kind === 'text' && read.file.kind === 'whole') {
      roles = { ...roles, code: orderImportsAfterEntryPoint(roles.code, entryPoint, read.file.text) };
    }
  }
  const evidence: BundleEvidence = {
    taskText,
    runSummary: options.runSummary ?? true,
    source,
    redact,
    listing,
    preflight,
    integrity,
    delegations,
    egress,
    roles,
    reader,
  };

  let scale = 1;
  let sections: RenderedSection[] = [];
  let text = '';
  let tokens = 0;
  for (let round = 0; round < MAX_FIT_ROUNDS; round++) {
    sections = await renderSections(evidence, scaleBudget(budget, scale), counter);
    text = `${sections
      .map((section) => section.text)
      .filter((section) => section !== '')
      .join('\n\n')}\n`;
    tokens = counter.count(text);
    if (tokens <= budget.totalTokens || round === MAX_FIT_ROUNDS - 1) break;
    scale *= (budget.totalTokens / tokens) * 0.95;
  }
  if (tokens > budget.totalTokens) {
    const cut = shrinkToTokens(counter, text, budget.totalTokens, 0.7);
    text = balanceAgentTextMarks(cut.text);
    tokens = text === cut.text ? cut.tokens : counter.count(text);
  }

  return {
    text,
    tokens,
    excerpts: sections
      .flatMap((section) => section.excerpts ?? [])
      .filter((item) => text.includes(item.text)),
    summary: BundleSummary.parse({
      source: source.kind,
      tokenizer: options.tokenCounter.name,
      tokens,
      budgetTokens: budget.totalTokens,
      budgetScale: Number(scale.toFixed(4)),
      sections: sections.map(({ text: _text, ...section }) => section),
      files: {
        total: listing.entries.length,
        bytes: listing.totalBytes,
        skippedFolders: listing.skippedFolders.length,
        walkLimitReached: listing.walkLimitReached,
      },
      preflight,
      integrity: {
        tampered: integrity.tampered,
        findings: integrity.findings,
        links: integrity.links.length,
      },
      judgeDirected: countAgentTextMarks(text),
      episode:
        source.kind === 'episode'
          ? {
              status: source.episode?.status ?? null,
              failureKind: source.episode?.failure?.kind ?? null,
              delegations: source.episode?.delegations ?? null,
              modelCalls: source.episode?.modelCalls ?? null,
              problem: source.episodeProblem ?? null,
            }
          : null,
    }),
  };
}

function scaleBudget(budget: BundleBudget, scale: number): BundleBudget {
  if (scale >= 1) return budget;
  const scaled = (value: number) => Math.max(0, Math.floor(value * scale));
  return {
    ...budget,
    preflightTokens: scaled(budget.preflightTokens),
    integrityTokens: scaled(budget.integrityTokens),
    treeTokens: scaled(budget.treeTokens),
    treeEntries: Math.max(1, scaled(budget.treeEntries)),
    dataTokens: scaled(budget.dataTokens),
    dataFileTokens: scaled(budget.dataFileTokens),
    reportTokens: scaled(budget.reportTokens),
    resultsTokens: scaled(budget.resultsTokens),
    resultFileTokens: scaled(budget.resultFileTokens),
    codeTokens: scaled(budget.codeTokens),
    codeFileTokens: scaled(budget.codeFileTokens),
    processTokens: scaled(budget.processTokens),
  };
}

/** Re-rendering a section re-counts the same file texts: remember the encodings of long texts for one bundle. */
function memoizedCounter(counter: TokenCounter): TokenCounter {
  const encodings = new Map<string, number[]>();
  const encode = (text: string): number[] => {
    if (text.length < 4096) return counter.encode(text);
    let ids = encodings.get(text);
    if (!ids) {
      ids = counter.encode(text);
      encodings.set(text, ids);
    }
    return ids;
  };
  return {
    name: counter.name,
    encode,
    count: (text) => encode(text).length,
    decode: (ids) => counter.decode(ids),
  };
}
