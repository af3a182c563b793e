import type { Endpoint } from '../config/endpoint.js';
import { roleEndpoints } from '../config/endpoint.js';
import type { RunConfig } from '../config/run-config.js';
import type { Figure, StageWork } from './plan-types.js';
import type { UnitFigures } from './unit-figures.js';

/** One role's share of the plan: its calls (episodes for the team) and their tokens, on one endpoint. */
export interface RoleTokens {
  /** `executor`, `judge`, `optimizer`, or `evaluation judge <name>`. */
  role: string;
  endpoint: Endpoint;
  /** Episodes for the executor, model calls for the others. */
  units: number;
  unit: 'episode' | 'call';
  /** Null when nothing bounds or measured them (an episode's input tokens without `--like`). */
  promptTokens: Figure | null;
  completionTokens: Figure;
}

/**
 * Tokens per role: every episode the executor's (the evaluation's generations run on its server too); the loop's
 * judge calls and the candidates' self-judgments the judge's; the optimizer's calls; each external judge its own.
 */
export function roleTokens(
  config: RunConfig,
  stages: readonly StageWork[],
  units: UnitFigures,
): RoleTokens[] {
  const endpoints = roleEndpoints(config);
  const sum = (pick: (stage: StageWork) => number) => stages.reduce((total, stage) => total + pick(stage), 0);
  const episodes = sum((stage) => stage.episodes.count);
  const loopJudgeCalls = sum((stage) =>
    stage.stage === 'evaluation' ? (stage.callsByJudge?.self ?? 0) : stage.judgeCalls.count,
  );
  const optimizerCalls = sum((stage) => stage.optimizerCalls.count);
  const times = (figure: Figure | null, count: number): Figure | null =>
    figure === null ? null : { value: figure.value * count, basis: figure.basis };
  const roles: RoleTokens[] = [
    {
      role: 'executor',
      endpoint: endpoints.executor,
      units: episodes,
      unit: 'episode',
      promptTokens: times(units.episode.promptTokens, episodes),
      completionTokens: times(units.episode.completionTokens, episodes)!,
    },
    {
      role: 'judge',
      endpoint: endpoints.judge,
      units: loopJudgeCalls,
      unit: 'call',
      promptTokens: times(units.judgeCall.promptTokens, loopJudgeCalls),
      completionTokens: times(units.judgeCall.completionTokens, loopJudgeCalls)!,
    },
    {
      role: 'optimizer',
      endpoint: endpoints.optimizer,
      units: optimizerCalls,
      unit: 'call',
      promptTokens: times(units.optimizerCall.promptTokens, optimizerCalls),
      completionTokens: times(units.optimizerCall.completionTokens, optimizerCalls)!,
    },
  ];
  for (const judge of config.evaluation?.judges ?? []) {
    const name = judge.name ?? judge.model;
    const calls = sum((stage) => stage.callsByJudge?.[name] ?? 0);
    if (calls === 0) continue;
    roles.push({
      role: `evaluation judge ${name}`,
      endpoint: judge,
      units: calls,
      unit: 'call',
      promptTokens: times(units.judgeCall.promptTokens, calls),
      completionTokens: times(units.judgeCall.completionTokens, calls)!,
    });
  }
  return roles;
}
