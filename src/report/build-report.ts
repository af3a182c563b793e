import { mkdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { UserError } from '../errors.js';
import { html } from '../html/html.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { page } from './page.js';
import { readRunForReport, type RunReportData } from './read-run.js';
import { benchmarkSection } from './sections/benchmark-section.js';
import { evaluationSection } from './sections/evaluation-section.js';
import { innerLoopSection } from './sections/inner-loop-section.js';
import { outerLoopSection } from './sections/outer-loop-section.js';
import { runSection } from './sections/run-section.js';
import { searchCoverageSection } from './sections/search-coverage-section.js';
import { trainingSection } from './sections/training-section.js';
import { workflowInformationSection } from './sections/workflow-information-section.js';
import { studentsSection } from './sections/students-section.js';

/** Where `mass report` writes by default: beside the run's records. */
export const REPORT_FILE = 'report.html';

/** The report's page for data already read. */
export async function renderReport(data: RunReportData, generatedAt = new Date()): Promise<string> {
  const notes = data.notes.length
    ? html`<section class="notes" id="notes">
        <h2>Not shown</h2>
        <p>
          What is missing from this run or could not be read (a run stopped half-way has gaps; run it again to
          fill them):
        </p>
        <ul>
          ${data.notes.map((note) => html`<li>${note}</li>`)}
        </ul>
      </section>`
    : '';
  const body = html`${notes} ${await runSection(data)} ${await innerLoopSection(data)}
  ${await searchCoverageSection(data)} ${await workflowInformationSection(data)}
  ${await outerLoopSection(data)} ${await trainingSection(data)} ${await evaluationSection(data)}
  ${await studentsSection(data)} ${await benchmarkSection(data)}`;
  return page({
    title: `mass report: ${data.name}`,
    subtitle: `${data.directory} · generated ${generatedAt.toISOString()}`,
    nav: [
      ['run', 'Run'],
      ['inner-loop', 'Inner loop'],
      ['search-coverage', 'Search coverage'],
      ['workflow-information', 'Task information'],
      ['outer-loop', 'Outer loop'],
      ['training', 'Training'],
      ['evaluation', 'Evaluation'],
      ['students', 'Students'],
      ['benchmarks', 'Benchmarks'],
      ...(data.notes.length
        ? ([['notes', `Not shown (${data.notes.length})`]] as Array<[string, string]>)
        : []),
    ],
    body,
  });
}

export interface WrittenReport {
  file: string;
  bytes: number;
  notes: string[];
}

/** Reads a run directory and writes its report, one self-contained HTML file (default: `<run>/report.html`). */
export async function writeReport(runDirectory: string, out?: string): Promise<WrittenReport> {
  const directory = resolve(runDirectory);
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new UserError(`${directory} is not a directory: give the run directory (e.g. runs/demo)`);
  }
  const data = await readRunForReport(directory);
  const file = resolve(out ?? join(directory, REPORT_FILE));
  const markup = await renderReport(data);
  await mkdir(dirname(file), { recursive: true });
  await writeFileAtomic(file, markup);
  return { file, bytes: Buffer.byteLength(markup), notes: data.notes };
}
