import { RunNotifications } from '../../notify/run-notifications.js';
import { loopPlan } from '../../plan/command-plans.js';
import { runGenerations, type RsiProgressEvent } from '../../rsi/run-generations.js';
import type { RsiSummary } from '../../records/rsi-records.js';
import { openRunSession, type RunSession } from '../../session/run-session.js';
import { parsePositiveInteger } from '../duration.js';
import { RsiProgressDisplay } from '../rsi-progress-display.js';

interface RsiFlags {
  config: string;
  rounds: string;
  runs: string;
  overrideConfig?: boolean;
  skipDoctor?: boolean;
  json?: boolean;
}

export async function rsiAction(flags: RsiFlags): Promise<void> {
  const rounds = parsePositiveInteger(flags.rounds, '--rounds');
  const session = await openRunSession({
    configFile: flags.config,
    runsDirectory: flags.runs,
    overrideConfig: flags.overrideConfig,
    command: 'mass rsi',
    // A resumed loop serves the generation it is at itself, under its own name.
    serverChecks: { skip: flags.skipDoctor, listing: 'any-served', runtimeLora: true, evaluation: false },
  });
  const summary = await runRsi(session, rounds);
  if (flags.json) console.log(JSON.stringify(summary, null, 2));
  else console.log(describeRsi(summary, session.run.directory));
}

/** Runs the loop with the live display, closing the session however it ends. */
export async function runRsi(session: RunSession, rounds: number, command = 'mass rsi'): Promise<RsiSummary> {
  try {
    const { config, run } = session;
    const tasks = (await session.taskDirs()).length;
    const { plan, text } = await loopPlan({
      config,
      suiteDir: session.suiteDir,
      rounds,
      command,
      runDirectory: run.directory,
    });
    // The display counts the plan's episodes: each round's search and champion runs, as if every search won.
    const display = new RsiProgressDisplay(plan?.totals.episodes.count ?? 0);
    process.stderr.write(
      `${command}: ${rounds} generation(s), ${tasks} task(s), ${config.search.iterations} search iteration(s), ${config.distill.runs} champion runs per task; run ${run.directory}\n${text}\n`,
    );
    const notifications = new RunNotifications(config, run.directory, command);
    const onProgress = stageNotifier(notifications, display.onEvent);
    return await notifications.around(async () => {
      const summary = await runGenerations({ session, rounds, onProgress });
      notifications.stageFinished('rsi', undefined, `${summary.generations.length} generation(s) played`);
      return summary;
    });
  } finally {
    await session.close();
  }
}

/**
 * The display's events, and a `stage-finished` notification each time a stage gives way to the next: the loop's
 * stages run one after another (`serve`, `search`, `distill`, then the next generation's `train`), and `done` ends a
 * generation's last.
 */
function stageNotifier(
  notifications: RunNotifications,
  onEvent: (event: RsiProgressEvent) => void,
): (event: RsiProgressEvent) => void {
  let current: { stage: string; generation: string } | null = null;
  return (event) => {
    onEvent(event);
    if (event.kind !== 'stage') return;
    if (current !== null) {
      notifications.stageFinished(
        current.stage,
        current.generation,
        event.stage === 'done' ? event.detail : undefined,
      );
    }
    current = event.stage === 'done' ? null : { stage: event.stage, generation: event.generation };
  };
}

export function describeRsi(summary: RsiSummary, runDirectory: string): string {
  const lines = [`Run ${runDirectory}: ${summary.generations.length} generation(s) played`];
  for (const generation of summary.generations) {
    const won = generation.tasks.filter((task) => task.beatsReference).length;
    lines.push(
      `  ${generation.generation} (${generation.servedAs}): searches beat the reference in ${won}/${generation.tasks.length} tasks`,
    );
    if (generation.dataset) {
      const { dataset } = generation;
      lines.push(
        `    data: ${dataset.trainEpisodes} train + ${dataset.validationEpisodes} validation episodes, ${dataset.trainWindows} windows, ${dataset.supervisedTokens} supervised tokens (${dataset.dir})`,
      );
    }
    if (generation.trained) {
      const { metrics } = generation.trained;
      const validation = metrics.chosenCheckpoint?.validationLoss ?? metrics.validationLoss.at(-1)?.loss;
      lines.push(
        `    trained ${generation.trained.generation}, served as ${generation.trained.servedAs}` +
          `${metrics.steps === null ? '' : `: ${metrics.steps} step${metrics.steps === 1 ? '' : 's'}`}` +
          `${validation === undefined ? '' : `, validation loss ${validation.toFixed(4)}`}`,
      );
    }
  }
  lines.push(`Generations: ${summary.registry.map((generation) => generation.name).join(' → ')}`);
  lines.push(`Registry: ${runDirectory}/train/registry.json; summary: ${runDirectory}/rsi-summary.json`);
  return lines.join('\n');
}
