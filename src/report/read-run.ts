import { readStudentExperiments } from '../records/read-students.js';
import type { StudentsRecord } from '../records/students-record.js';
import {
  BENCHMARKS_FOLDER,
  BenchmarkSummaryRecord,
  type BenchmarkSummary,
} from '../records/benchmark-records.js';
import { basename, join, resolve } from 'node:path';

import YAML from 'yaml';

import {
  WorkflowInformationRecord,
  type WorkflowInformation,
} from '../records/workflow-information-record.js';
import { RunConfig } from '../config/run-config.js';
import {
  readSingleAgentOuterLoop,
  readTaskOuterLoop,
  type TaskOuterLoop,
} from '../records/task-outer-loop.js';
import { TrainingDataStats, type TrainingDataStats as DataStats } from '../records/training-data-stats.js';
import { STATS_FILE } from '../records/training-records.js';
import { errorMessage } from '../errors.js';
import { GradeRow, EvaluationSummaryRecord, type EvaluationSummary } from '../records/evaluation-records.js';
import { RsiSummaryRecord, type RsiSummary } from '../records/rsi-records.js';
import { TaskRepeatsRecord, type TaskRepeats } from '../records/repeat-records.js';
import { TaskSearchRecord, type TaskSearchResult } from '../records/search-records.js';
import { describeIssues } from '../store/describe-issues.js';
import { RunFiles } from '../store/run-files.js';
import {
  DATASET_FOLDER,
  datasetPath,
  evaluationPath,
  runFiles,
  searchRepeatsPath,
  searchResultPath,
  workflowInformationPath,
} from '../store/run-paths.js';
import type { ModelGeneration } from '../records/model-generation.js';
import { ModelRegistry } from '../records/registry.js';
import { readTokenUsage, type TokenUsageRow } from './token-usage.js';
import { readWallTime, type WallTime } from './wall-time.js';

export interface ReportConfig {
  /** The frozen configuration as written; null when missing. */
  text: string | null;
  /** Null when it is missing or does not validate (`error` says why). */
  value: RunConfig | null;
  error: string | null;
}

export interface GenerationDataset {
  generation: string;
  stats: DataStats;
}

/** A task's outer loop, and the same task's single-agent collection where its round ran one. */
export interface ReportOuterLoop extends TaskOuterLoop {
  singleAgent: TaskOuterLoop | undefined;
}

export interface ReportEvaluation {
  name: string;
  summary: EvaluationSummary;
}

/** Everything the report shows, read from a run directory; what could not be read is in `notes`. */
export interface RunReportData {
  directory: string;
  name: string;
  config: ReportConfig;
  /** The registry's generations, L0 first; empty before the registry exists. */
  generations: ModelGeneration[];
  rsiSummary: RsiSummary | undefined;
  wallTime: WallTime | null;
  tokens: TokenUsageRow[];
  searches: TaskSearchResult[];
  /** The searches' reruns that measure their noise (`repeats.json`), for the tasks that have them. */
  searchRepeats: TaskRepeats[];
  /** Where each analysed generation's designs carry their task information (`mass analyze workflows`). */
  workflowInformation: WorkflowInformation[];
  /** Every `mass benchmark` summary of the run (`benchmarks/<benchmark>/summary-<agent>.json`). */
  benchmarks: BenchmarkSummary[];
  /** Every finished `mass students` experiment (`students/<name>/students.json`). */
  students: StudentsRecord[];
  outerLoops: ReportOuterLoop[];
  datasets: GenerationDataset[];
  evaluations: ReportEvaluation[];
  /** The oracle's grade of an episode (by id) where an evaluation graded it; null when the grader failed. */
  grades: Map<string, number | null>;
  notes: string[];
}

export async function readRunForReport(directory: string): Promise<RunReportData> {
  const root = resolve(directory);
  const files = new RunFiles(root);
  const config = await readConfig(files);
  const generations = await readRegistry(files);
  const rsiSummary = await files.record(RsiSummaryRecord, runFiles.rsiSummary);
  const searches = await readSearches(files);
  const searchRepeats = await readSearchRepeats(files);
  const workflowInformation = await readWorkflowInformation(files);
  const benchmarks = await readBenchmarks(files);
  const students = await readStudentExperiments(files);
  const outerLoops = await readOuterLoops(files);
  const datasets = await readDatasets(files);
  const evaluationNames = await files.folders(runFiles.evaluation);
  const evaluations: ReportEvaluation[] = [];
  const grades = new Map<string, number | null>();
  for (const name of evaluationNames) {
    const summary = await files.record(
      EvaluationSummaryRecord,
      evaluationPath(name, 'summary'),
      'this evaluation has not finished, so its figures are not shown',
    );
    if (summary) evaluations.push({ name, summary });
    const rows = await files.jsonLines(GradeRow, evaluationPath(name, 'grades'), 'a grade row');
    for (const row of rows) grades.set(row.episodeId, row.grade);
  }
  const servedNames = new Map(generations.map((generation) => [generation.servedAs, generation.name]));
  const tokens = await readTokenUsage(
    files,
    (servedAs) => servedNames.get(servedAs) ?? servedAs,
    evaluationNames,
    config.value?.roles.executor.prices,
  );
  const wallTime = readWallTime(files);
  return {
    directory: root,
    name: config.value?.name ?? basename(root),
    config,
    generations,
    rsiSummary,
    wallTime,
    tokens,
    searches,
    searchRepeats,
    workflowInformation,
    benchmarks,
    students,
    outerLoops,
    datasets,
    evaluations,
    grades,
    notes: files.notes,
  };
}

async function readConfig(files: RunFiles): Promise<ReportConfig> {
  const text = await files.text(runFiles.config, 'this is not a run directory, or the run never started');
  if (text === undefined) return { text: null, value: null, error: 'missing' };
  let decoded: unknown;
  try {
    decoded = YAML.parse(text);
  } catch (error) {
    return { text, value: null, error: `not valid YAML: ${errorMessage(error)}` };
  }
  const parsed = RunConfig.safeParse(decoded);
  if (!parsed.success) {
    const error = `not a valid configuration for this mass: ${describeIssues(parsed.error)}`;
    files.notes.push(`${runFiles.config} is ${error}`);
    return { text, value: null, error };
  }
  return { text, value: parsed.data, error: null };
}

async function readRegistry(files: RunFiles): Promise<ModelGeneration[]> {
  try {
    const registry = await ModelRegistry.open(files.directory);
    const generations = registry.list();
    if (generations.length === 0) {
      files.notes.push(`${runFiles.registry} is missing: no generation has been registered yet`);
    }
    return generations;
  } catch (error) {
    files.notes.push(`${runFiles.registry} was left out: ${errorMessage(error)}`);
    return [];
  }
}

/** Every finished task search of the run (`search/<generation>/<task>/result.json`); an unfinished one is a note. */
export async function readSearches(files: RunFiles): Promise<TaskSearchResult[]> {
  const searches: TaskSearchResult[] = [];
  for (const generation of await files.folders(runFiles.search)) {
    for (const task of await files.folders(join(runFiles.search, generation))) {
      const result = await files.record(
        TaskSearchRecord,
        searchResultPath(generation, task),
        'this search has not finished',
      );
      if (result) searches.push(result);
    }
  }
  return searches;
}

/** Every task's `repeats.json`; a search without reruns has none, which is not worth a note. */
async function readSearchRepeats(files: RunFiles): Promise<TaskRepeats[]> {
  const repeats: TaskRepeats[] = [];
  for (const generation of await files.folders(runFiles.search)) {
    for (const task of await files.folders(join(runFiles.search, generation))) {
      const record = await files.record(TaskRepeatsRecord, searchRepeatsPath(generation, task));
      if (record) repeats.push(record);
    }
  }
  return repeats;
}

/** Every generation's `analysis/workflows/<generation>.json`; a run never analysed has none, which is no note. */
async function readWorkflowInformation(files: RunFiles): Promise<WorkflowInformation[]> {
  const analyses: WorkflowInformation[] = [];
  for (const name of await files.files(join(runFiles.analysis, 'workflows'), '.json')) {
    const record = await files.record(
      WorkflowInformationRecord,
      workflowInformationPath(name.slice(0, -'.json'.length)),
    );
    if (record) analyses.push(record);
  }
  return analyses;
}

/** Every benchmark's summaries; a run never benchmarked has none, which is no note. */
async function readBenchmarks(files: RunFiles): Promise<BenchmarkSummary[]> {
  const summaries: BenchmarkSummary[] = [];
  for (const benchmark of await files.folders(BENCHMARKS_FOLDER)) {
    for (const name of await files.files(join(BENCHMARKS_FOLDER, benchmark), '.json')) {
      if (!name.startsWith('summary-')) continue;
      const record = await files.record(BenchmarkSummaryRecord, join(BENCHMARKS_FOLDER, benchmark, name));
      if (record) summaries.push(record);
    }
  }
  return summaries;
}

async function readOuterLoops(files: RunFiles): Promise<ReportOuterLoop[]> {
  const loops: ReportOuterLoop[] = [];
  for (const generation of await files.folders(runFiles.distill)) {
    for (const task of await files.folders(join(runFiles.distill, generation))) {
      if (task === DATASET_FOLDER) continue;
      loops.push({
        ...(await readTaskOuterLoop(files, generation, task)),
        singleAgent: await readSingleAgentOuterLoop(files, generation, task),
      });
    }
  }
  return loops;
}

async function readDatasets(files: RunFiles): Promise<GenerationDataset[]> {
  const datasets: GenerationDataset[] = [];
  for (const generation of await files.folders(runFiles.distill)) {
    const stats = await files.record(TrainingDataStats, datasetPath(generation, STATS_FILE));
    if (stats) datasets.push({ generation, stats });
  }
  return datasets;
}
