import type { TokenCounter } from '../model/token-counter.js';
import type { EgressLogRead } from '../proxy/egress-log.js';
import type { BundleBudget } from './bundle.js';
import {
  renderExcerptSection,
  renderTextSection,
  renderTree,
  type FileReader,
  type RenderedSection,
} from './bundle-sections.js';
import { shownName } from './bundle-names.js';
import { renderDataSection } from './data-section.js';
import { fenced, shrinkToTokens } from './excerpt.js';
import type { FileRoles } from './file-roles.js';
import type { RedactHostPaths } from './host-paths.js';
import { renderIntegrity, type IntegrityEvidence } from './integrity-findings.js';
import { balanceAgentTextMarks } from './judge-directed-text.js';
import { renderPreflight } from './preflight.js';
import { type DeliverableCheck } from '../records/bundle-summary.js';
import {
  renderDelegations,
  renderEgress,
  renderEpisodeSummary,
  type Delegation,
} from './process-evidence.js';
import type { WorkspaceListing } from './workspace-files.js';
import type { WorkspaceSource } from './workspace-source.js';

/** What a bundle is made from: the workspace read once, whatever the budget of a rendering round. */
export interface BundleEvidence {
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

/** Every section of a bundle within `budget`, in the order the judge reads them. */
export async function renderSections(
  evidence: BundleEvidence,
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
    const heading = `Changes to \`${shownName(file)}\` against the task's original:`;
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
  evidence: BundleEvidence,
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
