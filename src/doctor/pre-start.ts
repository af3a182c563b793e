import type { RunConfig } from '../config/run-config.js';
import { UserError } from '../errors.js';
import { describeEndpoint } from './doctor-table.js';
import { doctorPlan } from './doctor-plan.js';
import type { ListingMode } from './listing-check.js';
import { runDoctor } from './run-doctor.js';

export interface PreStartOptions {
  /** `mass search`, `mass rsi`, `mass eval`: named in the messages. */
  command: string;
  /** The stage serves the generation it needs itself (rsi, eval): another model listed first is not a failure. */
  listing: ListingMode;
  /** The run deploys adapters at run time (rsi) or loads older ones again (eval). */
  runtimeLora: boolean;
  /** Check the evaluation's judges and models too. */
  evaluation: boolean;
  /** Where a passing check's summary and warnings go (default stderr). */
  log?: (line: string) => void;
}

/**
 * The quick checks of `mass doctor` before a run's first episode: every configured server lists its model, fits the
 * budgets, returns tool calls structured, reasoning apart and usage in streams, and (for a run that deploys adapters)
 * has its runtime LoRA routes. A failure stops the command with the checks' own words; `--skip-doctor` skips them.
 * The toy model (served by mass itself) has nothing to check.
 */
export async function checkServersBeforeRun(config: RunConfig, options: PreStartOptions): Promise<void> {
  const plan = doctorPlan(config, { evaluation: options.evaluation });
  if (plan.endpoints.length === 0) return;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const started = performance.now();
  const endpoints = await runDoctor({
    config,
    plan,
    depth: 'pre-start',
    listing: options.listing,
    runtimeLora: options.runtimeLora,
  });
  const failing = endpoints.filter((endpoint) => endpoint.checks.some((result) => result.verdict === 'fail'));
  if (failing.length > 0) {
    const tables = failing.flatMap((endpoint) =>
      describeEndpoint(endpoint, (result) => result.verdict === 'fail').map((line) => `  ${line}`),
    );
    throw new UserError(
      `${options.command}: the model server is not set up for a run; nothing was started:\n${tables.join('\n')}\n` +
        `Fix it and run the same command again (\`mass doctor --config <file>\` runs every check), or pass --skip-doctor to start anyway.`,
    );
  }
  for (const endpoint of endpoints) {
    for (const result of endpoint.checks.filter((check) => check.verdict === 'warn')) {
      log(
        `${options.command}: ${endpoint.model} at ${endpoint.baseUrl}: ${result.check}: ${result.seen}${result.fix ? ` (fix: ${result.fix})` : ''}`,
      );
    }
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log(
    `${options.command}: model server checks passed for ${endpoints.length} endpoint(s) in ${seconds} s (--skip-doctor skips them)`,
  );
}
