import path from 'node:path';

import type { TaskManifest } from '../tasks/manifest.js';
import { byCodeUnits } from './format.js';
import { matchPaths } from './glob.js';
import type { WorkspaceEntry } from './workspace-files.js';

/**
 * Which workspace files the bundle excerpts, and in which order: the team's files by role, in the order a reviewer
 * would open them. Task inputs (copied files, generated data) are the task's, not the team's work, and are only listed.
 */
export interface FileRoles {
  /** Report deliverables. */
  reports: string[];
  /** Data deliverables first (metrics, ablation, other JSON and CSV), then other result and text files of the team. */
  results: Array<{ path: string; deliverable?: string }>;
  /** The entry point, the modules it imports, tests, then other code. */
  code: Array<{ path: string; note?: string }>;
  /** The team's own logs and notes. */
  logs: string[];
  /** The first file of the entry-point deliverable, when present. */
  entryPoint?: string;
  /** Files the task put there (inputs and generated data). */
  inputs: Set<string>;
  deliverables: Set<string>;
}

const DATA_KIND_RANK: Partial<Record<string, number>> = {
  'metrics-json': 0,
  'ablation-json': 1,
  json: 2,
  csv: 3,
};

const CODE_EXTENSIONS = new Set([
  '.py',
  '.sh',
  '.bash',
  '.r',
  '.jl',
  '.js',
  '.mjs',
  '.cjs',
  '.ts',
  '.m',
  '.c',
  '.cc',
  '.cpp',
  '.h',
  '.hpp',
  '.rs',
  '.go',
  '.java',
  '.scala',
  '.sql',
  '.ipynb',
  '.stan',
]);
const TEXT_RESULT_EXTENSIONS = new Set([
  '.json',
  '.csv',
  '.tsv',
  '.md',
  '.txt',
  '.yaml',
  '.yml',
  '.jsonl',
  '.toml',
  '.rst',
]);
const LOG_TEXT_EXTENSIONS = new Set(['.md', '.txt', '.jsonl', '.log']);
const LOG_NAME = /(^|[-_.])(log|logs|worklog|notes|progress|journal|trace|history)([-_.]|$)/i;
const TEST_NAME = /(^|\/)(test_[^/]*|[^/]*_test\.[a-z]+|tests?\/.*)$/i;

export function assignFileRoles(manifest: TaskManifest, entries: readonly WorkspaceEntry[]): FileRoles {
  const files = entries.filter((entry) => entry.type === 'file').map((entry) => entry.path);
  const inputs = new Set(manifest.inputs.files.map((file) => file.to));
  const generatedDir = manifest.inputs.generator?.outputDir.replace(/\/$/, '');
  const isInput = (file: string) =>
    inputs.has(file) || (generatedDir !== undefined && file.startsWith(`${generatedDir}/`));
  for (const file of files) if (isInput(file)) inputs.add(file);

  const deliverables = new Set<string>();
  const reports: string[] = [];
  const dataDeliverables: Array<FileRoles['results'][number] & { rank: number }> = [];
  const entryPoints: FileRoles['code'] = [];
  for (const deliverable of manifest.deliverables) {
    for (const file of matchPaths(deliverable.path, files)) {
      deliverables.add(file);
      if (deliverable.kind === 'report') reports.push(file);
      else if (deliverable.kind === 'entry-point')
        entryPoints.push({ path: file, note: `entry point: \`${deliverable.command}\`` });
      else if (deliverable.kind !== 'plot')
        dataDeliverables.push({
          path: file,
          deliverable: deliverable.id,
          rank: DATA_KIND_RANK[deliverable.kind] ?? 9,
        });
    }
  }

  const teamFiles = files.filter((file) => !inputs.has(file) && !deliverables.has(file));
  const logs = teamFiles.filter(isLogFile);
  const logSet = new Set(logs);
  const codeFiles = teamFiles.filter((file) => !logSet.has(file) && CODE_EXTENSIONS.has(extensionOf(file)));
  const codeSet = new Set(codeFiles);
  const otherResults = teamFiles
    .filter(
      (file) => !logSet.has(file) && !codeSet.has(file) && TEXT_RESULT_EXTENSIONS.has(extensionOf(file)),
    )
    .sort(byResultPriority);

  const tests = codeFiles.filter((file) => TEST_NAME.test(file));
  const testSet = new Set(tests);
  const otherCode = codeFiles.filter((file) => !testSet.has(file)).sort(byDepthThenPath);

  return {
    reports,
    results: [
      // Headline numbers before bulk data: a stable sort keeps the manifest's order within a kind.
      ...dataDeliverables
        .sort((left, right) => left.rank - right.rank)
        .map(({ rank: _rank, ...item }) => item),
      ...otherResults.map((file) => ({ path: file })),
    ],
    code: [
      ...entryPoints,
      ...tests.sort(byDepthThenPath).map((file) => ({ path: file, note: 'test' })),
      ...otherCode.map((file) => ({ path: file })),
    ],
    logs: logs.sort(byDepthThenPath),
    entryPoint: entryPoints[0]?.path,
    inputs,
    deliverables,
  };
}

/**
 * Moves the modules an entry point imports right behind it: a reviewer reads `run.py`, then what it calls.
 * `source` is the entry point's text; only files in the workspace are considered.
 */
export function orderImportsAfterEntryPoint(
  code: FileRoles['code'],
  entryPoint: string,
  source: string,
): FileRoles['code'] {
  if (!entryPoint.endsWith('.py')) return code;
  const available = new Map(code.map((item) => [item.path, item]));
  const base = path.posix.dirname(entryPoint);
  const modules = new Set<string>();
  for (const match of source.matchAll(
    /^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))/gm,
  )) {
    const names = match[1] ? [match[1]] : match[2]!.split(',').map((name) => name.trim());
    for (const name of names) {
      const relative = name.replace(/\./g, '/');
      for (const candidate of [`${relative}.py`, `${relative}/__init__.py`]) {
        const file = base === '.' ? candidate : `${base}/${candidate}`;
        if (available.has(file) && file !== entryPoint) modules.add(file);
      }
    }
  }
  if (modules.size === 0) return code;
  const entry = code.filter((item) => item.path === entryPoint);
  const importedItems = [...modules].sort(byCodeUnits).map((file) => ({
    ...available.get(file)!,
    note: available.get(file)!.note ?? `imported by \`${entryPoint}\``,
  }));
  const rest = code.filter((item) => item.path !== entryPoint && !modules.has(item.path));
  return [...entry, ...importedItems, ...rest];
}

function isLogFile(file: string): boolean {
  const extension = extensionOf(file);
  if (extension === '.log') return true;
  if (!LOG_TEXT_EXTENSIONS.has(extension)) return false;
  if (
    file
      .split('/')
      .slice(0, -1)
      .some((segment) => /^(logs?|notes)$/i.test(segment))
  )
    return true;
  return LOG_NAME.test(path.posix.basename(file, extension));
}

function extensionOf(file: string): string {
  return path.posix.extname(file).toLowerCase();
}

function depthOf(file: string): number {
  return file.split('/').length;
}

function byDepthThenPath(left: string, right: string): number {
  return depthOf(left) - depthOf(right) || byCodeUnits(left, right);
}

function resultFolderRank(file: string): number {
  const top = file.split('/')[0]!.toLowerCase();
  if (top === 'results' || top === 'result') return 0;
  if (['deliverables', 'outputs', 'output', 'reports', 'report'].includes(top)) return 1;
  return 2;
}

function byResultPriority(left: string, right: string): number {
  return resultFolderRank(left) - resultFolderRank(right) || byDepthThenPath(left, right);
}
