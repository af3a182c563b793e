import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';

import type { EpisodeRecord } from '../records/episode-record.js';
import { expectedProtectedDigests, sha256WorkspaceFile } from '../tasks/integrity.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { unifiedDiff } from '../line-diff.js';
import type { WorkspaceListing } from './workspace-files.js';
import type { ProtectedFileFinding } from '../records/bundle-summary.js';
import { shownName } from './bundle-names.js';

export interface IntegrityEvidence {
  findings: ProtectedFileFinding[];
  /** Unified diffs of modified text files against the task's originals, by path. */
  diffs: Array<{ path: string; diff: string }>;
  /** Symbolic links anywhere in the workspace (never followed). */
  links: string[];
  tampered: boolean;
}

const MAX_DIFFED_BYTES = 1024 * 1024;

export async function inspectIntegrity(
  task: LoadedTask,
  workspaceDir: string,
  listing: WorkspaceListing,
  episode: EpisodeRecord | undefined,
): Promise<IntegrityEvidence> {
  const findings: ProtectedFileFinding[] = [];
  const diffs: IntegrityEvidence['diffs'] = [];
  for (const expected of await expectedProtectedDigests(task)) {
    const file = path.join(workspaceDir, expected.path);
    let status: ProtectedFileFinding['status'];
    const stats = await lstat(file).catch(() => undefined);
    if (!stats) status = 'missing';
    else if (stats.isSymbolicLink()) status = 'replaced-by-link';
    else if (!stats.isFile()) status = 'missing';
    else {
      // A file that cannot be read cannot be shown to be the original.
      const actual = await sha256WorkspaceFile(workspaceDir, expected.path).catch(() => undefined);
      status = actual === expected.sha256 ? 'unchanged' : actual === undefined ? 'missing' : 'modified';
    }

    let episodeView: ProtectedFileFinding['episode'] = null;
    if (episode) {
      const asset = episode.integrity.assets.find((candidate) => candidate.path === expected.path);
      episodeView = !asset ? 'not-recorded' : asset.before === asset.after ? 'unchanged' : 'changed';
    }
    findings.push({ path: expected.path, status, episode: episodeView });

    if (status === 'modified' && stats && stats.size <= MAX_DIFFED_BYTES) {
      const source = task.manifest.inputs.files.find((input) => input.to === expected.path);
      const diff = source ? await diffAgainstOriginal(path.join(task.dir, source.from), file) : undefined;
      if (diff) diffs.push({ path: expected.path, diff });
    }
  }
  const links = listing.entries.filter((entry) => entry.type === 'symlink').map((entry) => entry.path);
  const tampered = findings.some(
    (finding) => finding.status !== 'unchanged' || finding.episode === 'changed',
  );
  return { findings, diffs, links, tampered };
}

async function diffAgainstOriginal(originalFile: string, workspaceFile: string): Promise<string | undefined> {
  const [original, current] = await Promise.all([readFile(originalFile), readFile(workspaceFile)]);
  if (original.length > MAX_DIFFED_BYTES || original.includes(0) || current.includes(0)) return undefined;
  return unifiedDiff(original.toString('utf8'), current.toString('utf8'));
}

const STATUS_TEXT: Record<ProtectedFileFinding['status'], string> = {
  unchanged: 'unchanged (matches the task’s original byte for byte)',
  modified: 'MODIFIED: differs from the task’s original',
  'replaced-by-link': 'REPLACED by a symbolic link',
  missing: 'MISSING from the workspace',
};

/** The integrity findings as text, without the diffs (those are excerpts, budgeted with the rest). */
export function renderIntegrity(evidence: IntegrityEvidence): string {
  const lines: string[] = [];
  if (evidence.findings.length === 0) {
    lines.push('The task protects no files.');
  } else {
    lines.push(
      evidence.tampered
        ? 'Protected files were changed. The task requires them unchanged: results obtained with changed files were not produced under the task’s conditions.'
        : evidence.findings.length === 1
          ? 'The protected file is unchanged.'
          : `All ${evidence.findings.length} protected files are unchanged.`,
    );
    for (const finding of evidence.findings) {
      const during =
        finding.episode === 'changed'
          ? '; the episode record reports it changed during the run'
          : finding.episode === 'unchanged' && finding.status !== 'unchanged'
            ? '; the episode record saw it unchanged at the end of the run (changed afterwards)'
            : '';
      lines.push(`- \`${shownName(finding.path)}\`: ${STATUS_TEXT[finding.status]}${during}`);
    }
  }
  if (evidence.links.length > 0) {
    const shown = evidence.links.slice(0, 10).map((link) => `\`${shownName(link)}\``);
    const more = evidence.links.length > 10 ? ` and ${evidence.links.length - 10} more` : '';
    lines.push(`Symbolic links in the workspace (not followed): ${shown.join(', ')}${more}.`);
  }
  return lines.join('\n');
}
