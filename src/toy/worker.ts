import { step, type Step } from './steps.js';
import { analysisScript, RESULT_PREFIX, type ScriptPlan } from './analysis-script.js';
import type { DeliverableSpec, TaskReading } from './task-reading.js';
import { TOY_OUTPUT_MARKER } from './toy-marker.js';
import { toyDraw } from './toy-random.js';
import type { ToyWeights } from './weights.js';

/**
 * The work itself, as a toy worker does it in three model turns: write the analysis script, run it, report. Used by
 * subagents and by an orchestrator that works alone. Every choice is drawn from `drawKey`, so each turn of the same
 * worker makes the same choices.
 */

export interface WorkerJob {
  agentId: string;
  task: TaskReading;
  /** Absolute path of the workspace, as the harness reports it. */
  workspace: string;
  outputs: DeliverableSpec[];
  checks: string[];
  /** A re-work is careful: it never repeats the slip. */
  attempt: number;
  weights: ToyWeights;
  /** Parts every draw of this worker starts with (the request seed, the task, the agent). */
  drawKey: Array<string | number>;
}

/** What the script printed on its result line. */
export interface WorkerResult {
  agent: string;
  data: string | null;
  values: Record<string, number>;
  files: string[];
  checks: Record<string, boolean>;
  skipped: string[];
  problems: string[];
}

export function planScript(job: WorkerJob): ScriptPlan & { scriptName: string } {
  const draw = (...parts: Array<string | number>) => toyDraw(...job.drawKey, ...parts);
  const checksRun = job.checks.filter((name) => draw('run-check', name) < job.weights.runChecks);
  const firstMetrics = job.outputs.find((spec) => spec.kind === 'metrics-json' || spec.kind === 'json');
  const slipOmittedKey =
    job.attempt === 1 && firstMetrics?.requiredKeys[0] && draw('careful') >= job.weights.careful
      ? firstMetrics.requiredKeys[0]
      : null;
  const entryPoint = job.outputs.find((spec) => spec.kind === 'entry-point' && spec.path.endsWith('.py'));
  const scriptName =
    entryPoint && job.attempt === 1
      ? entryPoint.path
      : `${job.agentId}${job.attempt > 1 ? `_attempt${job.attempt}` : ''}.py`;
  return {
    agentId: job.agentId,
    title: job.task.title,
    recipe: job.task.recipe,
    dataFiles: job.task.dataFiles,
    outputs: job.outputs,
    deliverables: job.task.deliverables,
    checksRun,
    checksSkipped: job.checks.filter((name) => !checksRun.includes(name)),
    slipOmittedKey,
    reportComplete: draw('complete-report') < job.weights.completeReport,
    scriptName,
  };
}

/** Turn 0 writes the script, turn 1 runs it; later turns have a result to report (the caller writes that). */
export function workerToolTurn(job: WorkerJob, turn: 0 | 1): Step {
  const plan = planScript(job);
  const scriptPath = `${job.workspace.replace(/\/$/, '')}/${plan.scriptName}`;
  if (turn === 0) {
    const files = plan.outputs.map((spec) => spec.path).join(', ') || 'no files (I only check)';
    return step.toolCall(
      'write_file',
      { file_path: scriptPath, content: analysisScript(plan) },
      {
        reasoning: `I am ${job.agentId}. I write ${plan.scriptName}: the ${plan.recipe} analysis of ${job.task.dataFiles.join(', ') || 'the data'}, writing ${files}, running ${plan.checksRun.length} of ${job.checks.length} checks. ${TOY_OUTPUT_MARKER}`,
      },
    );
  }
  return step.toolCall(
    'run_shell_command',
    {
      command: `cd ${shellQuote(job.workspace)} && /usr/bin/python3 ${shellQuote(plan.scriptName)}`,
      description: `Run ${plan.scriptName}`,
    },
    { reasoning: `Run the script and read its result line. ${TOY_OUTPUT_MARKER}` },
  );
}

/** The result line in a tool result, or undefined when the script did not get that far. */
export function readWorkerResult(toolOutput: string): WorkerResult | undefined {
  const line = toolOutput
    .split('\n')
    .reverse()
    .find((candidate) => candidate.includes(RESULT_PREFIX));
  if (!line) return undefined;
  try {
    const value = JSON.parse(line.slice(line.indexOf(RESULT_PREFIX) + RESULT_PREFIX.length)) as WorkerResult;
    return {
      agent: String(value.agent ?? ''),
      data: value.data ?? null,
      values: value.values ?? {},
      files: value.files ?? [],
      checks: value.checks ?? {},
      skipped: value.skipped ?? [],
      problems: value.problems ?? [],
    };
  } catch {
    return undefined;
  }
}

function shellQuote(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
