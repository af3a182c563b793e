import { readFileSync } from 'node:fs';

import { parseRunConfig, RunConfig } from '../../src/config/run-config.js';
import { judgeSystemPrompt } from '../../src/judge/judge-prompt.js';
import { isRecord } from '../../src/model/stream-accumulator.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import type { LoadedTask } from '../../src/tasks/load-task.js';
import type { Responder, ScriptedRequest } from '../../src/testing/scripted-server.js';
import { scriptedTeam, type ScriptedTeam } from '../../src/testing/scripted-team.js';
import { step, type Step } from '../../src/toy/steps.js';

/** The seed whose run meets a model error: its episode fails. */
export const FAILING_SEED = 2;

/**
 * The team and the judge on one scripted server. The team's run with seed s delegates a subagent that writes
 * `results/metrics.json` with `"quality": s`; the judge prefers the higher quality, except between qualities 0 and 3,
 * where every reply is unusable.
 */
export function teamAndJudge(task: LoadedTask): {
  responder: Responder;
  isJudgeRequest: (request: ScriptedRequest) => boolean;
  teamProblems: () => string[];
} {
  const judgeSystem = judgeSystemPrompt(task.judge);
  const teams = new Map<number, ScriptedTeam>();
  const isJudgeRequest = (request: ScriptedRequest) =>
    isRecord(request.body) &&
    Array.isArray(request.body.messages) &&
    isRecord(request.body.messages[0]) &&
    request.body.messages[0].content === judgeSystem;
  const responder = (request: ScriptedRequest): Step | Promise<Step> => {
    if (isJudgeRequest(request)) return judgeReply(request);
    const seed = isRecord(request.body) && typeof request.body.seed === 'number' ? request.body.seed : -1;
    if (seed === FAILING_SEED) return step.status(400, { message: 'context length exceeded' });
    let team = teams.get(seed);
    if (!team) teams.set(seed, (team = scriptedTeam(teamScript(seed))));
    return team.responder(request);
  };
  return {
    responder,
    isJudgeRequest,
    teamProblems: () => [...teams.values()].flatMap((team) => team.problems),
  };
}

function teamScript(quality: number) {
  return {
    orchestrator: [
      step.toolCall(
        'agent',
        {
          description: 'measure',
          prompt: 'MEASURE: write results/metrics.json',
          subagent_type: 'general-purpose',
          run_in_background: false,
        },
        { reasoning: 'Delegate the measurement.' },
      ),
      step.text('Done: the metrics are written.', { reasoning: 'The report is in.' }),
    ],
    subagents: [
      {
        task: 'MEASURE:',
        steps: [
          step.toolCall(
            'run_shell_command',
            {
              command: `mkdir -p results && echo '{"total": 10, "quality": ${quality}}' > results/metrics.json`,
              description: 'write the metrics',
            },
            { reasoning: 'Write it.' },
          ),
          step.text('results/metrics.json written.'),
        ],
      },
    ],
  };
}

function judgeReply(request: ScriptedRequest): Step {
  const messages = (request.body as { messages: Array<{ content: string }> }).messages;
  const user = messages[1]!.content;
  const quality = (name: 'A' | 'B') => {
    const section = user.slice(user.indexOf(`<workspace name="${name}">`));
    const match = /\\?"quality\\?":\s*(\d+)/.exec(section.slice(0, section.indexOf('</workspace>')));
    if (!match) throw new Error(`no quality in workspace ${name}`);
    return Number(match[1]);
  };
  const a = quality('A');
  const b = quality('B');
  if (Math.min(a, b) === 0 && Math.max(a, b) === 3) return step.text('Both are fine, I cannot decide.');
  const winner = a === b ? 'tie' : a > b ? 'A' : 'B';
  return step.text(JSON.stringify({ winner, rationale: `quality ${a} against ${b}` }));
}

/** A run of the test configuration: 4 runs, 3 needed, 2 train and 1 validation, repairs 1. */
export function openGenerationRun(
  runsDirectory: string,
  name: string,
  baseUrl: string,
  distill: Record<string, unknown> = {},
): Run<RunConfig> {
  const config = parseRunConfig(
    {
      name,
      suite: 'test/fixtures/tasks',
      roles: { executor: { baseUrl, model: 'team-model' } },
      budgets: { episodeTimeoutSeconds: 120 },
      concurrency: { episodes: 4, judgments: 1, tasks: 1 },
      distill: {
        runs: 4,
        needed: 3,
        maxTopUps: 1,
        ringOpponents: 2,
        train: 2,
        validation: 1,
        judgeRepairAttempts: 1,
        ...distill,
      },
    },
    'test configuration',
  );
  return openRun({ runsDirectory, name, configSchema: RunConfig, config });
}

export function jsonLines(file: string): unknown[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as unknown);
}

export const episodeId = (seed: number) => `L0-distill-tiny-sum-${seed}`;
