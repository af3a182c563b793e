import { basename, dirname, resolve } from 'node:path';

import { evaluationConfig, RunConfig } from '../../config/run-config.js';
import { UserError } from '../../errors.js';
import { ConfigMismatchError } from '../../store/frozen-config.js';
import { DEMO_SUITE, demoConfig } from '../../demo/demo-config.js';
import { describeEvaluation } from '../../evaluate/describe-evaluation.js';
import { evaluateRun } from '../../evaluate/evaluate-run.js';
import type { EvaluationSummary } from '../../records/evaluation-records.js';
import { openRun, type Run } from '../../store/run-store.js';
import { FAULT_KINDS, FaultPlan } from '../../config/fault-plan.js';
import { loadToyWeights, TOY_BEHAVIOURS } from '../../toy/weights.js';
import { writeReport } from '../../report/index.js';
import { ModelRegistry } from '../../records/registry.js';
import { runSession, type RunSession } from '../../session/run-session.js';
import { evaluationProgressLine } from './eval.js';
import { describeRsi, runRsi } from './rsi.js';

const DEMO_ROUNDS = 2;

export async function demoAction(options: { out: string; json?: boolean; faults?: string }): Promise<void> {
  const out = resolve(options.out);
  const faults = options.faults === undefined ? undefined : parseFaultRate(options.faults);
  const summary = await runRsi(runSession(openDemoRun(out, faults), DEMO_SUITE), DEMO_ROUNDS, 'mass demo');
  const evaluation = await evaluateDemo(runSession(openDemoRun(out, faults), DEMO_SUITE));
  const registry = await ModelRegistry.open(out);
  const weights = await Promise.all(
    registry.list().map(async (generation) => ({
      generation: generation.name,
      weights: await loadToyWeights(generation.mergedPath!),
    })),
  );
  const report = await writeReport(out);
  if (options.json) {
    console.log(
      JSON.stringify(
        { directory: out, ...summary, toyWeights: weights, evaluation, report: report.file },
        null,
        2,
      ),
    );
    return;
  }
  console.log('mass demo: the toy model (rule-based, no GPU; everything it writes is marked "toy output")');
  console.log(describeRsi(summary, out));
  console.log('The toy model’s behaviour, generation by generation (what toy training changed):');
  console.log(`  ${'behaviour'.padEnd(22)}${weights.map((entry) => entry.generation.padStart(8)).join('')}`);
  for (const behaviour of TOY_BEHAVIOURS) {
    const values = weights.map((entry) => entry.weights[behaviour].toFixed(3).padStart(8)).join('');
    console.log(`  ${behaviour.padEnd(22)}${values}`);
  }
  console.log('');
  console.log(
    'Did the trained generations do better? Evaluated on the demo tasks themselves (the demo suite has no test ' +
      'split), the toy model standing in as the external judge (toy):',
  );
  console.log(describeEvaluation(evaluation, out));
  console.log(`The report (one HTML file, open it in a browser): ${report.file}`);
  console.log('Run it again: finished steps are skipped. Delete the run directory to start over.');
}

/** `--faults`: a share of requests between 0 and 1. */
function parseFaultRate(text: string): number {
  const rate = Number(text);
  if (text.trim() === '' || !Number.isFinite(rate) || rate < 0 || rate > 1) {
    throw new UserError(`--faults ${text}: give the share of requests to fail, between 0 and 1 (e.g. 0.1)`);
  }
  return rate;
}

function openDemoRun(out: string, faultRate?: number): Run<RunConfig> {
  const config = demoConfig(
    basename(out),
    faultRate === undefined
      ? undefined
      : FaultPlan.parse({ rate: faultRate, kinds: [...FAULT_KINDS], seed: 1 }),
  );
  try {
    return openRun({
      runsDirectory: dirname(out),
      name: basename(out),
      configSchema: RunConfig,
      config,
      command: 'mass demo',
    });
  } catch (error) {
    if (!(error instanceof ConfigMismatchError)) throw error;
    throw new UserError(
      `${out} holds a run of another version of the demo (it differs in ${error.differences
        .map((difference) => difference.field)
        .join(', ')}): delete that folder, or give --out another one.`,
    );
  }
}

/** The demo's last stage: L0, L1 and L2 compared on the demo tasks by the toy judge and the oracle. */
async function evaluateDemo(session: RunSession): Promise<EvaluationSummary> {
  const progress = evaluationProgressLine();
  try {
    process.stderr.write('mass demo: evaluating L0, L1 and L2 (the toy model judges: toy)\n');
    return await evaluateRun({
      session,
      evaluation: evaluationConfig(session.config),
      onProgress: progress.onEvent,
    });
  } finally {
    progress.stop();
    await session.close();
  }
}
