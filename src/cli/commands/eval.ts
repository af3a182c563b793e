import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { evaluationConfig, RunConfig, type EvaluationConfig } from '../../config/run-config.js';
import { EvaluationOrders } from '../../config/evaluation-settings.js';
import { UserError } from '../../errors.js';
import { describeEvaluation } from '../../evaluate/describe-evaluation.js';
import { evaluateRun, type EvaluationProgress } from '../../evaluate/evaluate-run.js';
import { RunNotifications } from '../../notify/run-notifications.js';
import { evaluationPlanText } from '../../plan/command-plans.js';
import { openRunSession } from '../../session/run-session.js';
import { readFrozenConfig } from '../../store/frozen-config.js';
import { openRun, runFileNames, type Run } from '../../store/run-store.js';
import { parsePositiveInteger } from '../duration.js';
import type { EvaluationSummary } from '../../records/evaluation-records.js';

interface EvalFlags {
  config: string;
  runs: string;
  generations?: string;
  tasks?: string;
  rollouts?: string;
  orders?: string;
  skipDoctor?: boolean;
  json?: boolean;
}

export async function evalAction(flags: EvalFlags): Promise<void> {
  const list = (value: string | undefined) =>
    value
      ?.split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  const generations = list(flags.generations);
  const tasks = list(flags.tasks);
  const rollouts =
    flags.rollouts === undefined ? undefined : parsePositiveInteger(flags.rollouts, '--rollouts');
  const orders = flags.orders === undefined ? undefined : parseOrders(flags.orders);
  // The evaluation is the file's section, whatever the frozen configuration's was.
  let given: EvaluationConfig | undefined;
  const session = await openRunSession({
    configFile: flags.config,
    runsDirectory: flags.runs,
    command: 'mass eval',
    // Each generation is served by the evaluation itself: another one listed first is not a failure.
    serverChecks: {
      skip: flags.skipDoctor,
      listing: 'any-served',
      runtimeLora: true,
      evaluation: true,
    },
    open: (config, runsDirectory) => {
      given = evaluationConfig(config);
      return openEvaluatedRun(config, runsDirectory);
    },
  });
  const { run } = session;
  const evaluation: EvaluationConfig = {
    ...given!,
    ...(generations ? { generations } : {}),
    ...(tasks ? { tasks } : {}),
    ...(rollouts === undefined ? {} : { rollouts }),
    ...(orders === undefined ? {} : { orders }),
  };
  const progress = evaluationProgressLine();
  let summary: EvaluationSummary;
  try {
    process.stderr.write(
      `mass eval: evaluation "${evaluation.name}" of run ${run.directory}, ${evaluation.rollouts} rollout(s) per task, model and condition\n`,
    );
    const plan = await evaluationPlanText({
      config: session.config,
      evaluation,
      suiteDir: session.suiteDir,
      run,
      registry: await session.registry(),
      command: 'mass eval',
    });
    process.stderr.write(`${plan}\n`);
    const notifications = new RunNotifications(session.config, run.directory, 'mass eval');
    summary = await notifications.around(async () => {
      const finished = await evaluateRun({ session, evaluation, onProgress: progress.onEvent });
      notifications.stageFinished('evaluation', undefined, `evaluation ${evaluation.name}`);
      return finished;
    });
  } finally {
    progress.stop();
    await session.close();
  }
  if (flags.json) console.log(JSON.stringify(summary, null, 2));
  else console.log(describeEvaluation(summary, run.directory));
}

function parseOrders(value: string): EvaluationOrders {
  const parsed = EvaluationOrders.safeParse(value);
  if (!parsed.success) throw new UserError(`--orders: "${value}" is none of both, random and official`);
  return parsed.data;
}

/**
 * Opens the configuration's run for an evaluation. The evaluation section is an outside measure, not part of the
 * loop: it may differ from the frozen configuration's (or be added to a run that never had one) without touching
 * `config.yaml`; every other field must match, as for any command that resumes a run.
 */
export function openEvaluatedRun(config: RunConfig, runsDirectory: string): Run<RunConfig> {
  const frozenPath = join(runsDirectory, config.name, runFileNames.config);
  const frozen = existsSync(frozenPath) ? readFrozenConfig(frozenPath, RunConfig) : undefined;
  const { evaluation: _given, ...loop } = config;
  void _given;
  const compared =
    frozen === undefined
      ? config
      : { ...loop, ...(frozen.evaluation ? { evaluation: frozen.evaluation } : {}) };
  return openRun({
    runsDirectory,
    name: config.name,
    configSchema: RunConfig,
    config: compared,
    command: 'mass eval',
  });
}

/** One line on stderr as work finishes, at most one a second: episodes, grades and judgments done of planned. */
export function evaluationProgressLine(): { onEvent: (event: EvaluationProgress) => void; stop: () => void } {
  const planned = { episode: 0, grade: 0, judgment: 0 };
  const done = { episode: 0, grade: 0, judgment: 0 };
  let last = 0;
  const print = () => {
    process.stderr.write(
      `mass eval: episodes ${done.episode}/${planned.episode}, grades ${done.grade}/${planned.grade}, judgments ${done.judgment}/${planned.judgment}\n`,
    );
  };
  return {
    onEvent: (event) => {
      if (event.kind === 'loop-records') {
        print();
        process.stderr.write(
          "mass eval: grading the loop's collections and judging a sample of its tournaments again\n",
        );
        return;
      }
      if (event.kind === 'planned') {
        planned.episode = event.episodes;
        planned.grade = event.grades;
        planned.judgment = event.judgments;
        return;
      }
      if (event.kind === 'note') {
        process.stderr.write(`mass eval: ${event.text}\n`);
        return;
      }
      done[event.what] += event.count ?? 1;
      if (Date.now() - last >= 1000) {
        last = Date.now();
        print();
      }
    },
    stop: () => {
      if (planned.episode > 0) print();
    },
  };
}
