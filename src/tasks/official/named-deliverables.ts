import type { Deliverable } from '../manifest.js';

/**
 * The deliverables an official query names in its "Deliverables:" section, as manifest entries the judge's
 * deliverable checks can test: the report (the first Markdown file whose name says "report"), every JSON file and
 * every PNG plot. A plot named without a folder lies in `deliverables/plots/` when the section names that folder, as
 * the official queries do. Code files are left to the judge: the queries name them as examples ("e.g.
 * run_pipeline.py"), not as fixed paths. With no report named, `research_report.md` is assumed, as every official
 * query asks for one.
 */
export const DEFAULT_REPORT = 'research_report.md';
const PLOTS_FOLDER = 'deliverables/plots/';
const DESCRIPTION = "Named in the task's list of deliverables.";

const FILE = /(?<![\w./-])([A-Za-z0-9_][\w./-]*\.(md|json|png))(?![\w-])/g;

export function namedDeliverables(bare: string): Deliverable[] {
  const plain = bare.replaceAll('\\n', '\n');
  const start = plain.search(/\bDeliverables\s*:/i);
  const section = start >= 0 ? plain.slice(start) : '';
  const paths: Array<{ path: string; extension: string }> = [];
  for (const match of section.matchAll(FILE)) {
    const extension = match[2]!.toLowerCase();
    let file = match[1]!.replace(/\.+$/, '');
    if (extension === 'png' && !file.includes('/') && section.includes(PLOTS_FOLDER))
      file = PLOTS_FOLDER + file;
    if (file.split('/').includes('..')) continue;
    paths.push({ path: file, extension });
  }
  const deliverables: Deliverable[] = [];
  const usedPaths = new Set<string>();
  const usedIds = new Set<string>();
  const add = (path: string, make: (id: string) => Deliverable): void => {
    if (usedPaths.has(path)) return;
    usedPaths.add(path);
    deliverables.push(make(uniqueId(path, usedIds)));
  };
  const report =
    paths.find(({ path, extension }) => extension === 'md' && /report/i.test(path))?.path ?? DEFAULT_REPORT;
  add(report, (id) => ({
    id,
    kind: 'report',
    path: report,
    description: 'The research report.',
    requiredSections: [],
    minWords: 300,
  }));
  for (const { path, extension } of paths) {
    if (extension === 'json') {
      add(path, (id) => ({ id, kind: 'json', path, description: DESCRIPTION, requiredKeys: [] }));
    } else if (extension === 'png') {
      add(path, (id) => ({ id, kind: 'plot', path, description: DESCRIPTION }));
    }
  }
  return deliverables;
}

/** `results/metrics.json` → `results-metrics`; `-2`, `-3`… when taken. */
function uniqueId(path: string, used: Set<string>): string {
  const base =
    path
      .replace(/\.[^./]+$/, '')
      .replace(/^deliverables\/plots\//, 'plot-')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'deliverable';
  let id = /^[a-z0-9]/.test(base) ? base : `d-${base}`;
  for (let suffix = 2; used.has(id); suffix += 1) id = `${base}-${suffix}`;
  used.add(id);
  return id;
}
