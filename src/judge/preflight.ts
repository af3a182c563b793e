import type { Deliverable } from '../tasks/manifest.js';
import { checkDeliverableFile, type FileCheck } from './deliverable-checks.js';
import { formatCount } from './format.js';
import { isGlob, matchPaths } from './glob.js';
import { readWorkspaceBytes, readWorkspaceText, type WorkspaceListing } from './workspace-files.js';
import type { DeliverableCheck } from '../records/bundle-summary.js';
import { DeliverableStatus } from '../records/bundle-summary.js';
import { shownName } from './bundle-names.js';

/** Larger deliverables are checked by existence and size only. */
const MAX_CHECKED_BYTES = 8 * 1024 * 1024;
const MAX_GLOB_MATCHES_CHECKED = 20;
const SEVERITY: Record<DeliverableStatus, number> = {
  ok: 0,
  incomplete: 1,
  invalid: 2,
  empty: 3,
  missing: 4,
};

export async function runPreflight(
  root: string,
  deliverables: readonly Deliverable[],
  listing: WorkspaceListing,
): Promise<DeliverableCheck[]> {
  const filePaths = listing.entries.filter((entry) => entry.type === 'file').map((entry) => entry.path);
  const checks: DeliverableCheck[] = [];
  for (const deliverable of deliverables) {
    const base = { id: deliverable.id, kind: deliverable.kind, path: deliverable.path };
    const matched = matchPaths(deliverable.path, filePaths);
    if (matched.length === 0) {
      checks.push({
        ...base,
        matched,
        status: 'missing',
        problems: [whyMissing(deliverable.path, listing)],
        facts: [],
      });
      continue;
    }
    const results: Array<{ path: string; check: FileCheck }> = [];
    for (const file of matched.slice(0, MAX_GLOB_MATCHES_CHECKED)) {
      results.push({ path: file, check: await checkFile(root, file, deliverable, listing) });
    }
    const worst = results.reduce((current, next) =>
      SEVERITY[next.check.status] > SEVERITY[current.check.status] ? next : current,
    );
    const prefix = (file: string, line: string) =>
      isGlob(deliverable.path) ? `${shownName(file)}: ${line}` : line;
    const facts = results.flatMap((result) => result.check.facts.map((fact) => prefix(result.path, fact)));
    if (matched.length > MAX_GLOB_MATCHES_CHECKED) {
      facts.push(`${formatCount(matched.length - MAX_GLOB_MATCHES_CHECKED)} more matches not checked`);
    }
    checks.push({
      ...base,
      matched,
      status: worst.check.status,
      problems: results.flatMap((result) =>
        result.check.problems.map((problem) => prefix(result.path, problem)),
      ),
      facts,
    });
  }
  return checks;
}

async function checkFile(
  root: string,
  file: string,
  deliverable: Deliverable,
  listing: WorkspaceListing,
): Promise<FileCheck> {
  const size = listing.entries.find((entry) => entry.path === file)?.size ?? 0;
  if (size > MAX_CHECKED_BYTES && deliverable.kind !== 'plot') {
    return {
      status: 'ok',
      problems: [],
      facts: [`${formatCount(size)} bytes: too large to check its content`],
    };
  }
  const start = (await readWorkspaceBytes(root, file, 0, 64)) ?? Buffer.alloc(0);
  const end = (await readWorkspaceBytes(root, file, size - 12, 12)) ?? Buffer.alloc(0);
  let text: string | undefined;
  if (deliverable.kind !== 'plot') {
    const read = await readWorkspaceText(root, file, { maxWholeBytes: MAX_CHECKED_BYTES, endBytes: 0 });
    if (read.kind === 'text' && read.file.kind === 'whole') text = read.file.text;
  }
  return checkDeliverableFile(deliverable, { size, text, start, end });
}

function whyMissing(deliverablePath: string, listing: WorkspaceListing): string {
  const link = listing.entries.find(
    (entry) =>
      entry.type !== 'file' &&
      (entry.path === deliverablePath || deliverablePath.startsWith(`${entry.path}/`)),
  );
  if (link?.type === 'symlink')
    return `\`${shownName(link.path)}\` is a symbolic link; links are not followed`;
  if (link) return `\`${shownName(link.path)}\` is not a regular file`;
  return isGlob(deliverablePath) ? 'no file matches' : 'not found';
}

export function renderPreflight(checks: readonly DeliverableCheck[]): string {
  const counts = new Map<DeliverableStatus, number>();
  for (const check of checks) counts.set(check.status, (counts.get(check.status) ?? 0) + 1);
  const tally = DeliverableStatus.options
    .filter((status) => counts.has(status))
    .map((status) => `${counts.get(status)} ${status}`)
    .join(', ');
  const lines = checks.map((check) => {
    const label = check.status === 'ok' ? 'ok' : check.status.toUpperCase();
    const matchedNote =
      isGlob(check.path) && check.matched.length > 0 ? ` → ${check.matched.length} files` : '';
    const details = [...check.facts, ...check.problems.map((problem) => `PROBLEM: ${problem}`)];
    return `- [${label}] \`${check.path}\` (${check.kind})${matchedNote}${details.length > 0 ? `: ${details.join('; ')}` : ''}`;
  });
  return [`${checks.length} deliverables asked by the task: ${tally}.`, ...lines].join('\n');
}
