import { dirname, resolve } from 'node:path';

import { existsSync } from 'node:fs';

import { loadRunConfig } from '../../config/run-config.js';
import { throughputRecordPath } from '../../doctor/throughput-record.js';
import { UserError } from '../../errors.js';
import { describePlan } from '../../plan/describe-plan.js';
import { chooseThroughput } from '../../plan/doctor-throughput.js';
import { measureRun } from '../../plan/measured-run.js';
import { planCost } from '../../plan/plan-cost.js';
import { planRun, type RunPlan } from '../../plan/run-plan.js';
import { parsePositiveInteger } from '../duration.js';

interface PlanFlags {
  config: string;
  rounds: string;
  like?: string;
  throughput?: string;
  doctorRecord?: string;
  runs: string;
  winning?: string;
  only?: string;
  json?: boolean;
}

export async function planAction(flags: PlanFlags): Promise<void> {
  const rounds = parsePositiveInteger(flags.rounds, '--rounds');
  const config = await loadRunConfig(flags.config);
  const scope = parseScope(flags.only);
  const like = flags.like === undefined ? null : await measureRun(flags.like);
  if (flags.doctorRecord !== undefined && !existsSync(flags.doctorRecord)) {
    throw new UserError(
      `--doctor-record ${flags.doctorRecord}: there is no such file; mass doctor --config <file> --record <file> writes one`,
    );
  }
  const { throughput, note } = await chooseThroughput({
    config,
    given: flags.throughput === undefined ? null : parseThroughput(flags.throughput),
    recordPath: flags.doctorRecord ?? throughputRecordPath(flags.runs, config.name),
  });
  const plan = await planRun({
    config,
    suiteDir: resolve(dirname(resolve(flags.config)), config.suite),
    rounds,
    scope,
    like,
    throughput,
    throughputNote: note,
    winning: flags.winning === undefined ? undefined : parseWinning(flags.winning),
  });
  const cost = planCost(plan.roles);
  if (flags.json) console.log(JSON.stringify(planJson(plan, cost), null, 2));
  else console.log(describePlan(plan, cost));
}

function parseScope(text: string | undefined): 'all' | 'loop' | 'evaluation' {
  if (text === undefined) return 'all';
  if (text === 'loop' || text === 'evaluation') return text;
  throw new UserError(`--only ${text}: give loop (what mass rsi runs) or evaluation (what mass eval runs)`);
}

function parseThroughput(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new UserError(
      `--throughput ${text}: give output tokens per second, as mass doctor's throughput line says them (e.g. 1200)`,
    );
  }
  return value;
}

function parseWinning(text: string): number[] {
  return text.split(',').map((part) => {
    const value = Number(part.trim());
    if (part.trim() === '' || !Number.isInteger(value) || value < 0) {
      throw new UserError(
        `--winning ${text}: give a whole number of tasks per round, separated by commas (e.g. 2,1)`,
      );
    }
    return value;
  });
}

/** The plan as JSON: the measured run's directory instead of all it read. */
function planJson(plan: RunPlan, cost: ReturnType<typeof planCost>) {
  const { like, ...rest } = plan;
  return {
    ...rest,
    roles: plan.roles.map(({ endpoint, ...role }) => ({ ...role, model: endpoint.model })),
    like: like
      ? { name: like.name, directory: like.directory, stages: like.stages, recorded: like.recorded }
      : null,
    cost,
  };
}
