// A small run directory written from the real record schemas, for the report's tests: two tasks' searches, their
// tournaments and selections, a dataset, a trained generation with loss curves, one episode and an evaluation. Every
// text a model or an agent could have written carries a payload that would set `window.__pwned` if it ever ran.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import YAML from 'yaml';

import { RunConfig } from '../../src/config/run-config.js';
import { SINGLE_AGENT_FOLDER } from '../../src/store/run-paths.js';
import { CollectionRecord, TaskRankingRecord } from '../../src/records/generation-records.js';
import { selectEpisodes } from '../../src/distill/selection.js';
import { StatsTally, TrainingDataStats } from '../../src/records/training-data-stats.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import { EvaluationSummaryRecord } from '../../src/records/evaluation-records.js';
import type { JudgeDirectedFinding } from '../../src/records/judge-directed-text.js';
import type { JudgeDirectedText } from '../../src/records/judge-directed-text.js';
import { PairwiseJudgmentRecord } from '../../src/records/judgment-record.js';
import { OptimizerCallRecord } from '../../src/records/optimizer-outcome.js';
import { computeEvaluationFigures, type JudgedPair } from '../../src/records/evaluation-statistics/index.js';
import { TaskSearchRecord, type SearchIteration } from '../../src/records/search-records.js';
import { ModelRegistry } from '../../src/records/registry.js';

/** Payloads of each kind: a script element, an event handler, a `javascript:` link. */
export const PAYLOADS = {
  script: '<script>window.__pwned = "script"</script>',
  handler: '<img src=x onerror="window.__pwned = \'onerror\'; alert(1)">',
  link: '<a href="javascript:window.__pwned = \'link\'">open</a>',
  svg: '<svg onload="window.__pwned = \'svg\'"></svg>',
};
const all = Object.values(PAYLOADS).join(' ');

/** A task id that is also a folder name: no slash, so no closing tag, but an element with a handler. */
export const HOSTILE_TASK = 'task<img src=x onerror=window.__pwned=1>';
export const PLAIN_TASK = 'demo-potency';
/** An episode id (a folder name under episodes/) with a payload. */
export const HOSTILE_EPISODE = 'L0-distill-<svg onload=window.__pwned=2>-0';
/** The same, collected single-agent (`distill/L0/<task>/single-agent/`). */
export const HOSTILE_SINGLE_AGENT_EPISODE = 'L0-single-agent-distill-<svg onload=window.__pwned=3>-0';

const workflow = {
  schemaVersion: 1,
  agents: [
    { id: 'lead', kind: 'orchestrator', role: `Lead ${PAYLOADS.script}`, instruction: 'Delegate the fit.' },
    {
      id: 'analyst',
      kind: 'subagent',
      role: 'Analyst',
      instruction: 'Fit the curve.',
      contract: { fields: [{ name: 'ec50', type: 'number', description: 'EC50.' }], checks: [] },
    },
  ],
  hops: [
    { from: 'lead', to: 'analyst' },
    { from: 'analyst', to: 'lead' },
  ],
};

const execution = {
  status: 'success' as const,
  failure: null,
  delegations: 1,
  subagentThreads: 1,
  modelCalls: 3,
  failedModelCalls: 0,
  tokens: { prompt: 100, completion: 50, reasoning: 0, orchestratorCompletion: 20, subagentCompletion: 30 },
  durationMs: 1000,
  limitExceeded: null,
  tamperedPaths: [],
};

function searchEpisode(task: string, version: string) {
  const episodeId = `L0-${task}-${version}`;
  return { episodeId, dir: `episodes/${episodeId}`, status: 'success' as const, reason: null, execution };
}

function iteration(
  task: string,
  version: string,
  result: 'first' | 'second' | 'tie' | 'failed',
  champion: string,
  changeFraction: number | null,
): SearchIteration {
  const promoted = result === 'first';
  return {
    version,
    proposal:
      changeFraction === null ? null : { ok: true, design: workflow as never, changeFraction, basedOn: 'v0' },
    episode: searchEpisode(task, version),
    decision: {
      version,
      championBefore: champion,
      championAfter: promoted ? version : champion,
      promoted,
      matches: [
        {
          first: version,
          second: champion,
          purpose: 'candidate-vs-champion',
          result,
          rationale: `The judge says: ${all}`,
          judgment: null,
        },
      ],
      comparisons: [],
    },
    maxChangeFraction: changeFraction === null ? null : 0.3,
  };
}

async function writeSearch(run: string, task: string): Promise<void> {
  await TaskSearchRecord.write(join(run, 'search', 'L0', task, 'result.json'), {
    generation: 'L0',
    task,
    championRule: 'paper',
    judgeMode: 'random',
    reference: searchEpisode(task, 'reference'),
    champion: 'v1',
    championDesign: workflow as never,
    championEpisode: `L0-${task}-v1`,
    beatsReference: true,
    championHistory: [
      { version: 'v0', champion: 'v0' },
      { version: 'v1', champion: 'v1' },
      { version: 'v2', champion: 'v1' },
      { version: 'v3', champion: 'v1' },
    ],
    iterations: [
      iteration(task, 'v0', 'first', 'reference', null),
      iteration(task, 'v1', 'first', 'v0', 0.25),
      iteration(task, 'v2', 'second', 'v1', 0.2),
      iteration(task, 'v3', 'failed', 'v1', 0.1),
    ],
    counts: { episodes: 5, failedEpisodes: 0, judgments: 4, failedJudgments: 1, failedProposals: 0 },
  });
}

const bundle = {
  source: 'workspace' as const,
  tokenizer: 'qwen3',
  tokens: 10,
  budgetTokens: 100,
  budgetScale: 1,
  sections: [],
  files: { total: 1, bytes: 10, skippedFolders: 0, walkLimitReached: false },
  preflight: [],
  integrity: { tampered: false, findings: [], links: 0 },
  episode: null,
};
const usage = (prompt: number, completion: number) => ({
  promptTokens: prompt,
  completionTokens: completion,
  reasoningTokens: 0,
  totalTokens: prompt + completion,
});

/** A search verdict that took a repair (two judge calls), and the optimizer's call behind v1 (one call). */
async function writeSearchCalls(run: string, task: string): Promise<void> {
  const attempt = (number: number, ok: boolean) => ({
    attempt: number,
    repairRequest: number === 1 ? null : 'Answer in JSON.',
    rawOutput: ok ? '{"winner": "A"}' : PAYLOADS.script,
    reasoning: null,
    finishReason: 'stop',
    parse: ok
      ? { ok: true as const, verdict: { winner: 'A' as const, rationale: PAYLOADS.handler } }
      : { ok: false as const, error: 'not JSON' },
    usage: usage(1000, 100),
    latencyMs: 10,
  });
  await PairwiseJudgmentRecord.write(join(run, 'search', 'L0', task, 'v1', 'judgments', 'v1-vs-v0.json'), {
    task,
    mode: 'random',
    seed: 0,
    orderKey: 'v1-vs-v0',
    model: 'base-model',
    sampling: {},
    maxRepairAttempts: 2,
    x: { label: 'v1', bundle },
    y: { label: 'v0', bundle },
    judgments: [
      {
        shownAsA: 'x',
        prompt: { system: 'judge', user: 'compare' },
        status: 'ok',
        verdict: { winner: 'A', rationale: PAYLOADS.handler },
        winner: 'x',
        failure: null,
        attempts: [attempt(1, false), attempt(2, true)],
        usage: usage(2000, 200),
      },
    ],
    status: 'decided',
    winner: 'x',
    ordersAgree: null,
    failure: null,
    usage: usage(2000, 200),
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 20,
  });
  await OptimizerCallRecord.write(join(run, 'search', 'L0', task, 'v1', 'optimizer.json'), {
    taskId: task,
    currentLabel: 'v0',
    outcome: {
      ok: false,
      model: 'base-model',
      endpoint: 'optimizer',
      prompt: { system: 'optimize', user: 'the history' },
      maxChangeFraction: 0.3,
      attempts: [
        {
          attempt: 1,
          purpose: 'initial',
          message: 'the history',
          output: { content: PAYLOADS.link, reasoning: null, finishReason: 'stop' },
          usage: usage(3000, 300),
          durationMs: 10,
          outcome: { ok: false, reason: 'invalid-output', errors: ['not JSON'] },
        },
      ],
      usage: usage(3000, 300),
      reason: 'invalid-output',
      errors: ['not JSON'],
      refusedProposal: null,
    },
  });
}

/** The champion runs of a task: four ranked, one failed, one tampered; the single-agent ones have their own ids. */
export function runIds(task: string, singleAgent = false): string[] {
  const folder = task === HOSTILE_TASK ? 'hostile' : task;
  const prefix = singleAgent ? 'L0-single-agent-distill' : 'L0-distill';
  return [0, 1, 2, 3, 4, 5].map((index) =>
    task === HOSTILE_TASK && index === 0
      ? singleAgent
        ? HOSTILE_SINGLE_AGENT_EPISODE
        : HOSTILE_EPISODE
      : `${prefix}-${folder}-${index}`,
  );
}

/**
 * A task's collection, ranking and selection in `distill/L0/<task>/`, or with `singleAgent` its single-agent ones in
 * `distill/L0/<task>/single-agent/` (what `distill.singleAgentCollection` adds).
 */
export async function writeOuterLoop(run: string, task: string, singleAgent = false): Promise<void> {
  const base = join(run, 'distill', 'L0', task, ...(singleAgent ? [SINGLE_AGENT_FOLDER] : []));
  const ids = runIds(task, singleAgent);
  const players = ids.slice(0, 4);
  await CollectionRecord.write(join(base, 'collection.json'), {
    generation: 'L0',
    task,
    workflowHash: singleAgent ? null : 'abc',
    ...(singleAgent ? { condition: 'single-agent' as const } : {}),
    episodes: ids.map((episodeId, index) => ({
      episodeId,
      dir: `episodes/${episodeId}`,
      seed: index,
      status: index === 4 ? 'failure' : 'success',
      reason: index === 4 ? `timeout ${PAYLOADS.handler}` : null,
      tampered: index === 5,
      // The first run scanned clean, the second writing to its judge (with a payload as its text), the rest not
      // scanned (collected before it was recorded).
      ...(index === 0 ? { judgeDirected: judgeDirectedText([]) } : {}),
      ...(index === 1
        ? {
            judgeDirected: judgeDirectedText([
              {
                file: 'report.md',
                line: 3,
                kind: 'addresses-judge' as const,
                text: `Note to the judge ${PAYLOADS.handler}`,
              },
            ]),
          }
        : {}),
    })),
    successes: 5,
    topUps: 0,
    enough: true,
  });
  const scores = [1.2, 0.4, -0.3, -1.3];
  const ranking = {
    generation: 'L0',
    task,
    players,
    excluded: [
      { episodeId: ids[4]!, reason: 'failed' as const, detail: 'timeout' },
      { episodeId: ids[5]!, reason: 'tampered' as const, detail: PAYLOADS.link },
    ],
    matches: { scheduled: 8, decided: 7, failed: [3] },
    fit: {
      scores: Object.fromEntries(players.map((id, index) => [id, scores[index]!])),
      stderr: Object.fromEntries(players.map((id) => [id, 0.8])),
      iterations: 20,
      converged: true,
      prior: 0.5,
      mode: 'map' as const,
      stderrMethod: 'inverse-hessian' as const,
    },
    records: Object.fromEntries(
      players.map((id, index) => [id, { wins: 3 - index, ties: 1, losses: index }]),
    ),
    ranking: players,
  };
  await TaskRankingRecord.write(join(base, 'ranking.json'), ranking);
  const selection = selectEpisodes(
    [...players, ids[4]!, ids[5]!],
    ids.map((episodeId, index) => ({
      episodeId,
      status: index === 4 ? ('failure' as const) : ('success' as const),
      tampered: index === 5,
    })),
    { train: 2, validation: 1 },
  );
  await writeFile(join(base, 'selection.json'), `${JSON.stringify(selection, null, 2)}\n`);
}

async function writeDataset(run: string): Promise<void> {
  const tally = new StatsTally();
  for (const task of [PLAIN_TASK, HOSTILE_TASK]) {
    tally.episode('train');
    tally.add('train', task, 'orchestrator', {
      threads: 1,
      conversations: 1,
      querySegments: 1,
      windows: 1,
      tokens: 4000,
      supervisedTokens: 900,
    });
    tally.add('train', task, 'subagent', {
      threads: 1,
      conversations: 1,
      querySegments: 1,
      windows: 2,
      tokens: 6000,
      supervisedTokens: 2100,
    });
  }
  tally.episode('validation');
  tally.add('validation', PLAIN_TASK, 'orchestrator', {
    threads: 1,
    conversations: 1,
    querySegments: 1,
    windows: 1,
    tokens: 3000,
    supervisedTokens: 700,
  });
  await TrainingDataStats.write(join(run, 'distill', 'L0', 'dataset', 'stats.json'), {
    model: 'Qwen/Qwen3-8B',
    mode: 'team',
    limits: { windowTokens: 16384, maxContextTokens: 8192, maxHeaderFraction: 0.5 },
    splits: tally.splits,
  });
}

async function writeRegistry(run: string): Promise<void> {
  const registry = await ModelRegistry.open(run);
  await registry.addBase({ model: 'Qwen/Qwen3-8B', servedAs: 'base-model' });
  const merged = join(run, 'train', 'L1', 'merged');
  await mkdir(merged, { recursive: true });
  await registry.addTrained({
    name: 'L1',
    parent: 'L0',
    datasetId: 'distill/L0/dataset',
    servedAs: 'base-model-L1',
    result: {
      mergedPath: merged,
      logFile: join(run, 'train', 'L1', 'train.log'),
      metrics: {
        steps: 30,
        supervisedTokensProcessed: 120000,
        trainLoss: [0, 10, 20, 30].map((step, index) => ({ step, loss: 1.4 - 0.3 * index })),
        validationLoss: [10, 20, 30].map((step, index) => ({ step, loss: 1.2 - 0.2 * index })),
        checkpoints: [],
        chosenCheckpoint: null,
      },
    },
  });
}

async function writeEpisode(run: string): Promise<void> {
  const episodeId = `L0-${PLAIN_TASK}-v0`;
  const totals = { promptTokens: 5000, completionTokens: 700, reasoningTokens: 100 };
  await EpisodeRecord.write(join(run, 'episodes', episodeId, 'episode.json'), {
    episodeId,
    task: { id: PLAIN_TASK, dir: 'suites/demo/demo-potency' },
    workflowHash: 'abc',
    teacher: false,
    seed: 0,
    dataSeed: 0,
    model: 'base-model',
    baseUrl: 'http://127.0.0.1:8000/v1',
    status: 'success',
    failure: null,
    timings: {
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T00:01:00.000Z',
      durationMs: 60000,
      harnessMs: 59000,
    },
    usage: { total: totals, perThread: [{ ...totals, threadId: 'main', role: 'orchestrator', calls: 4 }] },
    modelCalls: 4,
    failedModelCalls: 0,
    delegations: 1,
    integrity: { assets: [], tampered: false, tamperedPaths: [] },
    sandbox: {
      enabled: true,
      exitCode: 0,
      signal: null,
      limitExceeded: null,
      cpuSeconds: 1,
      peakMemoryBytes: 1000,
    },
    harness: { name: 'qwen-code', version: '0.24.4' },
  });
}

/** An evaluation whose judge and task labels carry payloads: they reach the charts' SVG labels. */
async function writeEvaluation(run: string): Promise<void> {
  const judge = `judge ${PAYLOADS.script}`;
  const tasks = [PLAIN_TASK, HOSTILE_TASK];
  const outcomes: JudgedPair['outcome'][] = ['win', 'win', 'loss', 'tie', 'win', 'loss'];
  const judgments: JudgedPair[] = tasks.flatMap((task) =>
    outcomes.map((outcome, replicate) => ({
      task,
      condition: 'workflow',
      replicate,
      candidate: 'L1',
      baseline: 'L0',
      judge,
      seed: 0,
      order: 'candidate-first' as const,
      outcome,
    })),
  );
  const rollouts = tasks.flatMap((task) =>
    ['L0', 'L1'].flatMap((generation) =>
      [0, 1, 2].map((replicate) => ({
        task,
        condition: 'workflow',
        replicate,
        generation,
        grade: 50 + replicate * 10 + (generation === 'L1' ? 5 : 0),
        outputTokens: 4000 + replicate * 500,
        delegations: replicate,
        subagentThreads: replicate,
      })),
    ),
  );
  const selectedRuns = [
    {
      generation: 'L0',
      task: PLAIN_TASK,
      run: 'L0-distill-demo-potency-0',
      grade: 40,
      collectionGrades: [40, 60, 70],
      flagged: false,
    },
    {
      generation: 'L0',
      task: PLAIN_TASK,
      run: 'L0-distill-demo-potency-1',
      grade: 70,
      collectionGrades: [40, 60, 70],
      flagged: true,
    },
  ];
  const agreementSamples = [
    {
      name: 'tournament L0',
      verdicts: ['win', 'loss', 'tie', 'win'].flatMap((outcome, index) => [
        { evaluator: 'self', task: PLAIN_TASK, item: `m${index}`, outcome: outcome as 'win' },
        {
          evaluator: judge,
          task: PLAIN_TASK,
          item: `m${index}`,
          outcome: (index === 2 ? 'win' : outcome) as 'win',
        },
      ]),
    },
  ];
  const figures = computeEvaluationFigures(
    { judgments, rollouts, selectedRuns, agreementSamples },
    { resamples: 50, reference: 'L0' },
  );
  await EvaluationSummaryRecord.write(join(run, 'evaluation', 'final', 'summary.json'), {
    run: 'synthetic',
    name: 'final',
    settings: {},
    models: [
      { name: 'L0', servedAs: 'base-model', parent: null, standIn: null },
      { name: 'L1', servedAs: 'base-model-L1', parent: 'L0', standIn: null },
    ],
    judges: [{ name: judge, model: 'judge-model', standIn: null }],
    tasks,
    conditions: ['workflow'],
    comparisons: [{ candidate: 'L1', baseline: 'L0' }],
    counts: {
      episodes: 12,
      failedEpisodes: 0,
      judgments: 12,
      repairedJudgments: 0,
      failedJudgments: 0,
      grades: 12,
      failedGrades: 0,
    },
    figures,
    inputs: { judgedPairs: judgments, rollouts, selectedRuns, agreementSamples },
  });
  const grades = runIds(PLAIN_TASK)
    .slice(0, 3)
    .map((episodeId, index) => ({
      schemaVersion: 1,
      kind: 'evaluation-grade',
      key: `grade/${episodeId}`,
      episodeId,
      dir: `episodes/${episodeId}`,
      task: PLAIN_TASK,
      dataSeed: 0,
      grade: index === 2 ? null : 80 - index * 20,
      parts: [],
      error: index === 2 ? 'the grader failed' : null,
    }));
  await writeFile(
    join(run, 'evaluation', 'final', 'grades.jsonl'),
    grades.map((row) => JSON.stringify(row)).join('\n') + '\n',
  );
}

/** Writes the whole synthetic run into `run` (an empty folder). */
export async function writeSyntheticRun(run: string): Promise<void> {
  const config = RunConfig.parse({
    name: 'synthetic',
    suite: 'suites/demo',
    roles: { executor: { model: 'base-model', baseUrl: 'http://user:secret-password@127.0.0.1:8000/v1' } },
  });
  await mkdir(run, { recursive: true });
  await writeFile(join(run, 'config.yaml'), YAML.stringify(config));
  await writeRegistry(run);
  for (const task of [PLAIN_TASK, HOSTILE_TASK]) {
    await writeSearch(run, task);
    await writeSearchCalls(run, task);
    await writeOuterLoop(run, task);
  }
  await writeDataset(run);
  await writeEpisode(run);
  await writeEvaluation(run);
}

/** A run's judge-directed text as a collection records it, from its findings. */
function judgeDirectedText(findings: JudgeDirectedFinding[]): JudgeDirectedText {
  return {
    spans: findings.length,
    characters: findings.reduce((sum, finding) => sum + finding.text.length, 0),
    files: new Set(findings.map((finding) => finding.file)).size,
    filesScanned: 3,
    complete: true,
    findings,
  };
}
