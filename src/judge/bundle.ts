import { z } from 'zod';

import type { TokenCounter } from '../model/token-counter.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';
import {
  FileReader,
  renderExcerptSection,
  renderTextSection,
  renderTree,
  type FileExcerpt,
  type RenderedSection,
} from './bundle-sections.js';
import { renderDataSection } from './data-section.js';
import { unwrapTaskCopies } from './delegation-ask.js';
import { DEFAULT_BUNDLE_BUDGET } from './judge-defaults.js';
import { fenced, shrinkToTokens } from './excerpt.js';
import { hostPathRedactor, type RedactHostPaths } from './host-paths.js';
import { balanceAgentTextMarks, countAgentTextMarks, markJudgeDirectedText } from './judge-directed-text.js';
import { assignFileRoles, orderImportsAfterEntryPoint, type FileRoles } from './file-roles.js';
import {
  inspectIntegrity,
  ProtectedFileFinding,
  renderIntegrity,
  type IntegrityEvidence,
} from './integrity-findings.js';
import { DeliverableCheck, renderPreflight, runPreflight } from './preflight.js';
import type { EgressLogRead } from '../proxy/egress-log.js';
import {
  readDelegations,
  readEpisodeEgress,
  renderDelegations,
  renderEgress,
  renderEpisodeSummary,
  type Delegation,
} from './process-evidence.js';
import { listWorkspace, type WorkspaceListing } from './workspace-files.js';
import { locateWorkspace, type WorkspaceSource } from './workspace-source.js';

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

export const BundleSection = z.object({
  name: z.string(),
  tokens: z.number().int(),
  budgetTokens: z.number().int(),
  itemsShown: z.number().int(),
  itemsNotShown: z.number().int(),
  truncated: z.boolean(),
});

/** What a bundle held, for the stored judgment: sizes, cuts, and the mechanical findings in structured form. */
export const BundleSummary = z.object({
  source: z.enum(['episode', 'workspace']),
  tokenizer: z.string(),
  tokens: z.number().int(),
  budgetTokens: z.number().int(),
  /** The factor the section budgets were scaled by to fit the total (1: no scaling). */
  budgetScale: z.number(),
  sections: z.array(BundleSection),
  files: z.object({
    total: z.number().int(),
    bytes: z.number().int(),
    skippedFolders: z.number().int(),
    walkLimitReached: z.boolean(),
  }),
  preflight: z.array(DeliverableCheck),
  integrity: z.object({
    tampered: z.boolean(),
    findings: z.array(ProtectedFileFinding),
    links: z.number().int(),
  }),
  /**
   * Text of the agents in the bundle that addresses the judge or imitates the bundle, as shown marked: the markers and
   * the characters inside them (absent in records written before it was marked).
   */
  judgeDirected: z.object({ marks: z.number().int(), characters: z.number().int() }).optional(),
  episode: z
    .object({
      status: z.enum(['success', 'failure']).nullable(),
      failureKind: z.string().nullable(),
      delegations: z.number().int().nullable(),
      modelCalls: z.number().int().nullable(),
      problem: z.string().nullable(),
    })
    .nullable(),
});
export type BundleSummary = z.infer<typeof BundleSummary>;

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
  const evidence: Evidence = {
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

interface Evidence {
  /** The task as the team was given it: a delegation's copy of it is not shown again. */
  taskText: string;
  runSummary: boolean;
  source: WorkspaceSource;
  redact: RedactHostPaths;
  listing: WorkspaceListing;
  preflight: DeliverableCheck[];
  integrity: IntegrityEvidence;
  delegations: Delegation[] | undefined;
  /** The egress log, when the task allowed network. */
  egress: EgressLogRead | undefined;
  roles: FileRoles;
  reader: FileReader;
}

async function renderSections(
  evidence: Evidence,
  budget: BundleBudget,
  counter: TokenCounter,
): Promise<RenderedSection[]> {
  const { roles, reader } = evidence;
  const preflight = renderTextSection(
    counter,
    'preflight',
    `### Deliverables preflight (automatic checks against the task's list)\n${renderPreflight(evidence.preflight)}`,
    budget.preflightTokens,
  );
  const integrity = renderIntegritySection(evidence.integrity, budget.integrityTokens, counter);
  const tree = renderTree({
    listing: evidence.listing,
    deliverables: roles.deliverables,
    inputs: roles.inputs,
    maxEntries: budget.treeEntries,
    budgetTokens: budget.treeTokens,
    counter,
  });
  const report = await renderExcerptSection({
    name: 'report',
    heading: '### Report',
    emptyText: 'No report file (see the preflight).',
    items: roles.reports.map((file) => ({ path: file, note: 'report deliverable' })),
    reader,
    counter,
    budgetTokens: budget.reportTokens,
    perItemTokens: budget.reportTokens,
    headShare: 0.6,
  });
  const results = await renderExcerptSection({
    name: 'results',
    heading: '### Results and other text files the team wrote',
    emptyText: 'None.',
    items: roles.results.map((item) => ({
      path: item.path,
      note: item.deliverable ? `deliverable ${item.deliverable}` : undefined,
    })),
    reader,
    counter,
    budgetTokens: budget.resultsTokens,
    perItemTokens: budget.resultFileTokens,
    headShare: 0.6,
  });
  const code = await renderExcerptSection({
    name: 'code',
    heading: '### Code',
    emptyText: 'No code files written by the team.',
    items: roles.code,
    reader,
    counter,
    budgetTokens: budget.codeTokens,
    perItemTokens: budget.codeFileTokens,
    headShare: 0.7,
  });
  const process = await renderProcessSection(evidence, budget.processTokens, counter);
  const data = await renderDataSection({
    inputs: evidence.listing.entries
      .filter((entry) => entry.type === 'file' && roles.inputs.has(entry.path))
      .map((entry) => entry.path),
    taskText: evidence.taskText,
    reader,
    counter,
    budgetTokens: budget.dataTokens,
    perFileTokens: budget.dataFileTokens,
  });
  return [preflight, integrity, tree, data, report, results, code, process];
}

function renderIntegritySection(
  integrity: IntegrityEvidence,
  budgetTokens: number,
  counter: TokenCounter,
): RenderedSection {
  const parts = [`### Integrity of protected files\n${renderIntegrity(integrity)}`];
  let remaining = budgetTokens - counter.count(parts[0]!) - 8;
  let truncated = false;
  for (const { path: file, diff } of integrity.diffs) {
    const heading = `Changes to \`${file}\` against the task's original:`;
    const room = remaining - counter.count(heading) - 12;
    if (room < 48) break;
    const excerpt = shrinkToTokens(counter, diff, room, 0.6);
    truncated ||= excerpt.truncated;
    const piece = `${heading}\n${fenced(excerpt.text, 'diff')}`;
    remaining -= counter.count(piece) + 2;
    parts.push(piece);
  }
  const section = renderTextSection(counter, 'integrity', parts.join('\n\n'), budgetTokens);
  return { ...section, truncated: section.truncated || truncated };
}

async function renderProcessSection(
  evidence: Evidence,
  budgetTokens: number,
  counter: TokenCounter,
): Promise<RenderedSection> {
  const { source, delegations } = evidence;
  const parts = ['### Process evidence'];
  if (source.kind === 'workspace') {
    parts.push(
      'No episode record: this is a plain workspace folder, so only its files are evidence of how the work went.',
    );
  } else {
    if (source.episode && evidence.runSummary) {
      parts.push(evidence.redact(renderEpisodeSummary(source.episode)));
    }
    if (source.episodeProblem) parts.push(`Episode record: ${source.episodeProblem}.`);
    if (evidence.egress) parts.push(renderEgress(evidence.egress, source.episode));
    if (delegations) {
      const room = Math.floor(budgetTokens * 0.45);
      parts.push(balanceAgentTextMarks(renderDelegations(counter, delegations, room, evidence.taskText)));
    }
  }
  const head = parts.join('\n\n');
  const logs = await renderExcerptSection({
    name: 'process',
    heading: 'The team’s own logs and notes:',
    emptyText: 'None written.',
    items: evidence.roles.logs.map((file) => ({ path: file })),
    reader: evidence.reader,
    counter,
    budgetTokens: Math.max(0, budgetTokens - counter.count(head) - 8),
    perItemTokens: Math.max(0, Math.floor(budgetTokens / 2)),
    headShare: 0.35,
  });
  const section = renderTextSection(counter, 'process', `${head}\n\n${logs.text}`, budgetTokens);
  return {
    ...section,
    itemsShown: logs.itemsShown,
    itemsNotShown: logs.itemsNotShown,
    truncated: section.truncated || logs.truncated,
    excerpts: (logs.excerpts ?? []).filter((excerpt) => section.text.includes(excerpt.text)),
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
