// A synthetic run the size of the paper's: its tasks' searches, tournaments, selection and evaluation, written from
// the real record schemas, and a few hundred episodes whose proxy logs hold threads of 150 calls with contexts
// growing to about 100k tokens, written by the proxy's own encoder. `npm run bench records` measures every reader on it.
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import YAML from 'yaml';

import { RunConfig } from '../../src/config/run-config.js';
import { CollectionRecord, TaskRankingRecord } from '../../src/records/generation-records.js';
import { selectEpisodes } from '../../src/distill/selection.js';
import { episodePrompt } from '../../src/episode/prompt.js';
import type { GradeRow } from '../../src/records/evaluation-records.js';
import { EvaluationSummaryRecord, JudgmentRow } from '../../src/records/evaluation-records.js';
import { computeEvaluationFigures, type JudgedPair } from '../../src/records/evaluation-statistics/index.js';
import { PairwiseJudgmentRecord } from '../../src/records/judgment-record.js';
import { OptimizerCallRecord } from '../../src/records/optimizer-outcome.js';
import { fitBradleyTerry } from '../../src/ranking/bradley-terry.js';
import type { Match } from '../../src/ranking/matches.js';
import { tallyRecords } from '../../src/ranking/matches.js';
import { seededRandom, type Random } from '../../src/ranking/seeded-random.js';
import {
  TaskSearchRecord,
  type SearchEpisode,
  type SearchIteration,
} from '../../src/records/search-records.js';
import {
  distillTaskPath,
  evaluationPath,
  outerLoopFiles,
  runEpisodePath,
  runFiles,
  searchResultPath,
  searchVersionPath,
} from '../../src/store/run-paths.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { openRunDatabase } from '../../src/store/database.js';
import { renderTaskPrompt } from '../../src/tasks/render-prompt.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { renderWorkflow } from '../../src/workflow/render.js';
import type { TeamDesign } from '../../src/workflow/workflow.js';
import { makeLexicon, prose } from '../support/prose.js';
import {
  copyEpisode,
  writeEpisodeTemplate,
  type EpisodeCopy,
  type EpisodeKind,
  type EpisodeTemplate,
} from './episode-templates.js';
import type { TeamShape } from './team-log.js';

/** The run's size. The defaults are the paper's where it gives them (MASS §2–§5), a few hundred episodes in all. */
export interface PaperRunShape {
  tasks: number;
  /** Workflow versions per task's search, after its bare reference: v0..v11. */
  versions: number;
  /** Champion runs collected per task for the tournament. */
  championRuns: number;
  /** Opponents per run in the tournament's ring. */
  ringOpponents: number;
  train: number;
  validation: number;
  /** Evaluation rollouts per task, condition and generation. */
  rollouts: number;
  judges: number;
  judgeSeeds: number;
  team: TeamShape;
  /** A bare-task episode: the orchestrator alone. */
  bare: TeamShape;
  /** Distinct episodes generated per kind; every other episode is a copy of one (for another task). */
  templatesPerKind: number;
}

export const PAPER_RUN: PaperRunShape = {
  tasks: 12,
  versions: 12,
  championRuns: 12,
  ringOpponents: 4,
  train: 8,
  validation: 2,
  rollouts: 2,
  judges: 3,
  judgeSeeds: 2,
  team: { subagents: 3, subagentCalls: 150, orchestratorCalls: 24 },
  bare: { subagents: 0, subagentCalls: 0, orchestratorCalls: 150 },
  templatesPerKind: 2,
};

/** What was written: where, how many, and the templates' figures (every episode is one of them). */
export interface PaperRun {
  run: string;
  suite: string;
  episodes: { kind: EpisodeKind; directory: string; template: number }[];
  templates: EpisodeTemplate[];
  /** The episodes selected for training and validation, as the loop's selection chose them. */
  selected: { train: string[]; validation: string[] };
  /** The evaluation's name, and the episode pages a reader of the run opens. */
  evaluation: string;
}

const FIXTURE_TASK = fileURLToPath(new URL('../../test/fixtures/tasks/tiny-mean', import.meta.url));
const GENERATION = 'L0';
const BASE_MODEL = 'qwen3-8b';
const STARTED = Date.parse('2026-11-02T09:00:00.000Z');

const taskId = (index: number) => `paper-task-${String(index).padStart(2, '0')}`;

/** Writes the run into `root/run` (and its tasks into `root/tasks`); `root` should be empty. */
export async function writePaperRun(root: string, shape: PaperRunShape = PAPER_RUN): Promise<PaperRun> {
  const random = seededRandom(20_261_202);
  const lexicon = makeLexicon(random, 20_000);
  const run = join(root, 'run');
  const suite = join(root, 'tasks');
  const tasks = Array.from({ length: shape.tasks }, (_, index) => taskId(index));
  const bareText = await writeSuite(suite, tasks, random, lexicon);
  const designs = versionDesigns(shape.versions, random, lexicon);

  const templates: EpisodeTemplate[] = [];
  const kinds: EpisodeKind[] = ['teacher', 'team', 'bare'];
  for (const kind of kinds) {
    for (let index = 0; index < shape.templatesPerKind; index++) {
      const bare = bareText;
      const prompt = episodePrompt({
        task: bare,
        workflow: kind === 'bare' ? undefined : renderWorkflow(designs[0]!),
        teacher: kind === 'teacher',
      });
      const directory = join(root, 'templates', `${kind}-${index}`);
      templates.push(
        await writeEpisodeTemplate(
          directory,
          kind,
          prompt,
          kind === 'bare' ? shape.bare : shape.team,
          random,
          lexicon,
        ),
      );
    }
  }
  const episodes: PaperRun['episodes'] = [];
  let written = 0;
  const episode = async (kind: EpisodeKind, copy: Omit<EpisodeCopy, 'directory'>, folder: string) => {
    const choices = templates.filter((template) => template.kind === kind);
    const template = choices[written % choices.length]!;
    const directory = join(run, folder, copy.episodeId);
    await copyEpisode(template, { ...copy, directory }, new Date(STARTED + written * 60_000));
    episodes.push({ kind, directory, template: templates.indexOf(template) });
    written++;
  };

  await mkdir(run, { recursive: true });
  const config = RunConfig.parse({
    name: 'paper-sized',
    suite,
    roles: { executor: { model: BASE_MODEL, baseUrl: 'http://127.0.0.1:8000/v1' } },
  });
  await writeFile(join(run, runFiles.config), YAML.stringify(config));
  await writeRegistry(run);

  const selected: PaperRun['selected'] = { train: [], validation: [] };
  for (const task of tasks) {
    const dir = join(suite, task);
    const reference = `${GENERATION}-${task}-reference`;
    await episode(
      'bare',
      {
        episodeId: reference,
        task: { id: task, dir },
        workflowHash: null,
        teacher: false,
        seed: 0,
        model: BASE_MODEL,
      },
      runFiles.episodes,
    );
    for (let version = 0; version < shape.versions; version++) {
      const episodeId = `${GENERATION}-${task}-v${version}`;
      await episode(
        'team',
        {
          episodeId,
          task: { id: task, dir },
          workflowHash: `design-${version}`,
          teacher: false,
          seed: version,
          model: BASE_MODEL,
        },
        runFiles.episodes,
      );
    }
    const champion = await writeSearch(run, task, shape, designs, templates, random, lexicon);
    const runs = Array.from(
      { length: shape.championRuns },
      (_, index) => `${GENERATION}-distill-${task}-${index}`,
    );
    for (const [index, episodeId] of runs.entries()) {
      await episode(
        'teacher',
        {
          episodeId,
          task: { id: task, dir },
          workflowHash: `design-${champion}`,
          teacher: true,
          seed: 100 + index,
          model: BASE_MODEL,
        },
        runFiles.episodes,
      );
    }
    const selection = await writeTournament(run, task, runs, shape, random, lexicon);
    selected.train.push(...selection.train.map((id) => join(run, runEpisodePath(id))));
    selected.validation.push(...selection.validation.map((id) => join(run, runEpisodePath(id))));
  }

  const evaluation = 'final';
  const evaluationEpisodes = join('evaluation', evaluation, 'episodes');
  for (const task of tasks) {
    const dir = join(suite, task);
    for (const condition of ['bare', 'workflow'] as const) {
      for (const generation of ['L0', 'L1']) {
        for (let replicate = 0; replicate < shape.rollouts; replicate++) {
          await episode(
            condition === 'bare' ? 'bare' : 'team',
            {
              episodeId: `${generation}-${task}-${condition}-${replicate}`,
              task: { id: task, dir },
              workflowHash: condition === 'bare' ? null : 'champion',
              teacher: false,
              seed: 1_000 + replicate,
              model: generation === 'L0' ? BASE_MODEL : `${BASE_MODEL}-L1`,
            },
            evaluationEpisodes,
          );
        }
      }
    }
  }
  await writeEvaluation(run, evaluation, tasks, shape, random, lexicon);
  writeStepIndex(run, episodes.length);
  return { run, suite, episodes, templates, selected, evaluation };
}

/** The run's index: a done step per episode, one a minute, as the report reads the run's wall time from it. */
function writeStepIndex(run: string, episodes: number): void {
  const database = openRunDatabase(join(run, runFiles.database));
  const insert = database.prepare(
    `INSERT INTO steps (key, status, attempts, started_at, finished_at, duration_ms, output_json, error)
     VALUES (?, 'done', 1, ?, ?, 60000, '{}', NULL)`,
  );
  database.transaction(() => {
    for (let index = 0; index < episodes; index++) {
      const started = STARTED + index * 60_000;
      insert.run(
        `episode/${index}`,
        new Date(started).toISOString(),
        new Date(started + 60_000).toISOString(),
      );
    }
  })();
  database.close();
}

/**
 * The run's tasks: the fixture task's folder under each id, with one prompt of a research task's length for all (so
 * that one finished episode stands for an episode of any task). Returns the prompt as a bare-task episode has it.
 */
async function writeSuite(
  suite: string,
  tasks: string[],
  random: Random,
  lexicon: string[],
): Promise<string> {
  const manifest = YAML.parse(await readFile(join(FIXTURE_TASK, 'task.yaml'), 'utf8')) as object;
  const prompt = `# A research task\n\n${prose(random, lexicon, 2_500)}\n`;
  for (const task of tasks) {
    const directory = join(suite, task);
    await cp(FIXTURE_TASK, directory, { recursive: true });
    await writeFile(
      join(directory, 'task.yaml'),
      YAML.stringify({ ...manifest, id: task, title: `Research task ${task}`, prompt }),
    );
  }
  return renderTaskPrompt(await loadTask(join(suite, tasks[0]!)));
}

/** v0..: a team of an orchestrator and three subagents whose instructions the optimizer rewrites a little each time. */
function versionDesigns(count: number, random: Random, lexicon: string[]): TeamDesign[] {
  const roles = ['planner', 'analyst', 'checker'];
  let instructions = roles.map(() => prose(random, lexicon, 600));
  return Array.from({ length: count }, (_, version) => {
    if (version > 0)
      instructions = instructions.map((text, index) =>
        index === version % 3 ? `${text} ${prose(random, lexicon, 200)}` : text,
      );
    return {
      schemaVersion: 1,
      agents: [
        {
          id: 'lead',
          kind: 'orchestrator',
          role: 'Lead who plans and delegates.',
          instruction: prose(random, lexicon, 400),
        },
        ...roles.map((id, index) => ({
          id,
          kind: 'subagent' as const,
          role: `The ${id}.`,
          instruction: instructions[index]!,
          contract: {
            fields: [{ name: 'summary', type: 'string' as const, description: 'What was done.' }],
            checks: [],
          },
        })),
      ],
      hops: roles.flatMap((id) => [
        { from: 'lead', to: id },
        { from: id, to: 'lead' },
      ]),
    } as TeamDesign;
  });
}

const usage = (prompt: number, completion: number) => ({
  promptTokens: prompt,
  completionTokens: completion,
  reasoningTokens: Math.round(completion / 2),
  totalTokens: prompt + completion,
});

function searchEpisode(task: string, version: string, template: EpisodeTemplate): SearchEpisode {
  const { log, threads } = template;
  const completion = (role: string) =>
    threads
      .filter((thread) => thread.role === role)
      .reduce((sum, thread) => sum + thread.usage.completionTokens, 0);
  const episodeId = `${GENERATION}-${task}-${version}`;
  return {
    episodeId,
    dir: runEpisodePath(episodeId),
    status: 'success',
    reason: null,
    execution: {
      status: 'success',
      failure: null,
      delegations: log.delegations,
      subagentThreads: threads.filter((thread) => thread.role === 'subagent').length,
      modelCalls: log.rows,
      failedModelCalls: 0,
      tokens: {
        prompt: log.promptTokens,
        completion: log.completionTokens,
        reasoning: Math.round(log.completionTokens / 3),
        orchestratorCompletion: completion('orchestrator'),
        subagentCompletion: completion('subagent'),
      },
      durationMs: log.rows * 6_000,
      limitExceeded: null,
      tamperedPaths: [],
    },
  };
}

/** The judge's record of one comparison: the prompt it saw (a bundle of two workspaces) and its verdict. */
function judgmentRecord(
  task: string,
  x: string,
  y: string,
  winner: 'x' | 'y',
  random: Random,
  lexicon: string[],
) {
  const bundle = {
    source: 'episode' as const,
    tokenizer: 'qwen3',
    tokens: 60_000,
    budgetTokens: 100_000,
    budgetScale: 1,
    sections: [],
    files: { total: 6, bytes: 80_000, skippedFolders: 0, walkLimitReached: false },
    preflight: [],
    integrity: { tampered: false, findings: [], links: 0 },
    episode: null,
  };
  const rationale = prose(random, lexicon, 1_500);
  const verdict = { winner: winner === 'x' ? ('A' as const) : ('B' as const), rationale };
  return {
    task,
    mode: 'random' as const,
    seed: 0,
    orderKey: `${x}-vs-${y}`,
    model: BASE_MODEL,
    sampling: {},
    maxRepairAttempts: 2,
    x: { label: x, bundle },
    y: { label: y, bundle },
    judgments: [
      {
        shownAsA: 'x' as const,
        prompt: { system: 'You compare two research workspaces.', user: prose(random, lexicon, 4_000) },
        status: 'ok' as const,
        verdict,
        winner,
        failure: null,
        attempts: [
          {
            attempt: 1,
            repairRequest: null,
            rawOutput: JSON.stringify(verdict),
            reasoning: prose(random, lexicon, 3_000),
            finishReason: 'stop',
            parse: { ok: true as const, verdict },
            usage: usage(60_000, 2_000),
            latencyMs: 40_000,
          },
        ],
        usage: usage(60_000, 2_000),
      },
    ],
    status: 'decided' as const,
    winner,
    ordersAgree: null,
    failure: null,
    usage: usage(60_000, 2_000),
    startedAt: new Date(STARTED).toISOString(),
    durationMs: 40_000,
  };
}

/** A task's search: each version judged against the bare reference, its design and the optimizer's call. */
async function writeSearch(
  run: string,
  task: string,
  shape: PaperRunShape,
  designs: TeamDesign[],
  templates: EpisodeTemplate[],
  random: Random,
  lexicon: string[],
): Promise<string> {
  const team = templates.find((template) => template.kind === 'team')!;
  const bare = templates.find((template) => template.kind === 'bare')!;
  const iterations: SearchIteration[] = [];
  const history: { version: string; champion: string }[] = [];
  let champion = 'reference';
  for (let index = 0; index < shape.versions; index++) {
    const version = `v${index}`;
    await mkdir(join(run, searchVersionPath(GENERATION, task, version, 'judgments')), { recursive: true });
    await writeFile(
      join(run, searchVersionPath(GENERATION, task, version, 'workflow')),
      JSON.stringify(designs[index], null, 2),
    );
    const beats = random() < 0.4;
    const judgment = join(
      searchVersionPath(GENERATION, task, version, 'judgments'),
      `${version}-vs-reference.json`,
    );
    await PairwiseJudgmentRecord.write(
      join(run, judgment),
      judgmentRecord(task, version, 'reference', beats ? 'x' : 'y', random, lexicon),
    );
    const championBefore = champion;
    if (beats) champion = version;
    if (index > 0) await writeOptimizerCall(run, task, version, designs[index]!, random, lexicon);
    history.push({ version, champion });
    iterations.push({
      version,
      proposal:
        index === 0
          ? null
          : {
              ok: true,
              design: designs[index]! as never,
              changeFraction: 0.15,
              basedOn: championBefore === 'reference' ? 'v0' : championBefore,
            },
      episode: searchEpisode(task, version, team),
      decision: {
        version,
        championBefore,
        championAfter: champion,
        promoted: beats,
        matches: [
          {
            first: version,
            second: 'reference',
            purpose: 'candidate-vs-reference' as never,
            result: beats ? 'first' : 'second',
            rationale: prose(random, lexicon, 300),
            judgment,
          },
        ],
        comparisons: [],
      },
      maxChangeFraction: index === 0 ? null : 0.3,
    });
  }
  if (champion === 'reference') champion = 'v0';
  await TaskSearchRecord.write(join(run, searchResultPath(GENERATION, task)), {
    generation: GENERATION,
    task,
    championRule: 'paper',
    judgeMode: 'random',
    reference: searchEpisode(task, 'reference', bare),
    champion,
    championDesign: designs[Number(champion.slice(1))]! as never,
    championEpisode: `${GENERATION}-${task}-${champion}`,
    beatsReference: true,
    championHistory: history,
    iterations,
    counts: {
      episodes: shape.versions + 1,
      failedEpisodes: 0,
      judgments: shape.versions,
      failedJudgments: 0,
      failedProposals: 0,
    },
  });
  return champion;
}

async function writeOptimizerCall(
  run: string,
  task: string,
  version: string,
  design: TeamDesign,
  random: Random,
  lexicon: string[],
) {
  const callUsage = usage(40_000, 6_000);
  await OptimizerCallRecord.write(join(run, searchVersionPath(GENERATION, task, version, 'optimizer')), {
    taskId: task,
    currentLabel: 'v0',
    outcome: {
      ok: true,
      model: BASE_MODEL,
      endpoint: 'optimizer',
      prompt: { system: 'You improve a team workflow.', user: prose(random, lexicon, 12_000) },
      maxChangeFraction: 0.3,
      attempts: [
        {
          attempt: 1,
          purpose: 'initial',
          message: prose(random, lexicon, 2_000),
          output: {
            content: JSON.stringify(design),
            reasoning: prose(random, lexicon, 6_000),
            finishReason: 'stop',
          },
          usage: callUsage,
          durationMs: 90_000,
          outcome: { ok: true, changeFraction: 0.15 },
        },
      ],
      usage: callUsage,
      proposal: {
        design,
        changes: [prose(random, lexicon, 200)],
        why: prose(random, lexicon, 800),
        evidenceUsed: ['the last verdict'],
        expectedImpact: prose(random, lexicon, 200),
        verificationChecks: ['the report names its checks'],
      },
      changeFraction: 0.15,
      diffText: prose(random, lexicon, 400),
    } as never,
  });
}

/** The champion runs' collection, a ring tournament judged by the model, Bradley–Terry and the selection. */
async function writeTournament(
  run: string,
  task: string,
  runs: string[],
  shape: PaperRunShape,
  random: Random,
  lexicon: string[],
): Promise<{ train: string[]; validation: string[] }> {
  const base = (...below: string[]) => join(run, distillTaskPath(GENERATION, task, ...below));
  await mkdir(base(outerLoopFiles.judgments), { recursive: true });
  await CollectionRecord.write(base(outerLoopFiles.collection), {
    generation: GENERATION,
    task,
    workflowHash: 'champion',
    episodes: runs.map((episodeId, seed) => ({
      episodeId,
      dir: runEpisodePath(episodeId),
      seed,
      status: 'success' as const,
      reason: null,
      tampered: false,
    })),
    successes: runs.length,
    topUps: 0,
    enough: true,
  });
  const matches: Match[] = [];
  for (let index = 0; index < runs.length; index++) {
    for (let step = 1; step <= shape.ringOpponents / 2; step++) {
      const [a, b] = [runs[index]!, runs[(index + step) % runs.length]!];
      const winner = random() < 0.5 ? 'a' : 'b';
      await PairwiseJudgmentRecord.write(
        base(outerLoopFiles.judgments, `${matches.length}.json`),
        judgmentRecord(task, a, b, winner === 'a' ? 'x' : 'y', random, lexicon),
      );
      matches.push({ a, b, winner });
    }
  }
  await writeFile(
    base(outerLoopFiles.matches),
    matches.map((match) => `${JSON.stringify(match)}\n`).join(''),
  );
  const fit = fitBradleyTerry(matches, { players: runs, prior: 0.5 });
  const records = Object.fromEntries(tallyRecords(matches));
  await TaskRankingRecord.write(base(outerLoopFiles.ranking), {
    generation: GENERATION,
    task,
    players: runs,
    excluded: [],
    matches: { scheduled: matches.length, decided: matches.length, failed: [] },
    fit: {
      scores: fit.scores,
      stderr: fit.stderr,
      iterations: fit.iterations,
      converged: fit.converged,
      prior: fit.prior,
      mode: fit.mode,
      stderrMethod: fit.stderrMethod,
    },
    records: Object.fromEntries(runs.map((id) => [id, records[id] ?? { wins: 0, ties: 0, losses: 0 }])),
    ranking: fit.ranking,
  });
  const selection = selectEpisodes(
    fit.ranking,
    runs.map((episodeId) => ({ episodeId, status: 'success' as const, tampered: false })),
    { train: shape.train, validation: shape.validation },
  );
  await writeFile(base(outerLoopFiles.selection), `${JSON.stringify(selection, null, 2)}\n`);
  return { train: selection.train, validation: selection.validation };
}

async function writeRegistry(run: string): Promise<void> {
  const registry = await ModelRegistry.open(run);
  await registry.addBase({ model: 'Qwen/Qwen3-8B', servedAs: BASE_MODEL });
  const merged = join(run, 'train', 'L1', 'merged');
  await mkdir(merged, { recursive: true });
  const steps = 1_624;
  await registry.addTrained({
    name: 'L1',
    parent: 'L0',
    datasetId: 'distill/L0/dataset',
    servedAs: `${BASE_MODEL}-L1`,
    result: {
      mergedPath: merged,
      logFile: join(run, 'train', 'L1', 'train.log'),
      metrics: {
        steps,
        supervisedTokensProcessed: 28_800_000,
        trainLoss: Array.from({ length: steps / 4 }, (_, index) => ({
          step: index * 4,
          loss: 1.4 * Math.exp(-index / 200) + 0.4,
        })),
        validationLoss: Array.from({ length: 10 }, (_, index) => ({
          step: (index + 1) * 150,
          loss: 1.2 - 0.05 * index,
        })),
        checkpoints: [],
        chosenCheckpoint: null,
      },
    },
  });
}

/** L1 against L0 on every task, bare and with the champion's workflow, by three judges with two seeds in both orders. */
async function writeEvaluation(
  run: string,
  name: string,
  tasks: string[],
  shape: PaperRunShape,
  random: Random,
  lexicon: string[],
) {
  const judges = Array.from({ length: shape.judges }, (_, index) => `judge-${index}`);
  const rows: JudgmentRow[] = [];
  const pairs: JudgedPair[] = [];
  const grades: GradeRow[] = [];
  const rollouts = [];
  for (const task of tasks) {
    for (const condition of ['bare', 'workflow']) {
      for (let replicate = 0; replicate < shape.rollouts; replicate++) {
        const episodeOf = (generation: string) => `${generation}-${task}-${condition}-${replicate}`;
        for (const generation of ['L0', 'L1']) {
          const grade = Math.round(40 + random() * 50 + (generation === 'L1' ? 5 : 0));
          grades.push({
            schemaVersion: 1,
            kind: 'evaluation-grade',
            key: `grade/${episodeOf(generation)}`,
            episodeId: episodeOf(generation),
            dir: join(evaluationPath(name, 'episodes'), episodeOf(generation)),
            task,
            dataSeed: 1_000 + replicate,
            grade,
            parts: [],
            error: null,
          });
          rollouts.push({
            task,
            condition,
            replicate,
            generation,
            grade,
            outputTokens: 150_000 + Math.round(random() * 50_000),
            delegations: condition === 'bare' ? 0 : 3,
            subagentThreads: condition === 'bare' ? 0 : 3,
          });
        }
        for (const judge of judges) {
          for (let seed = 0; seed < shape.judgeSeeds; seed++) {
            for (const order of ['candidate-first', 'baseline-first'] as const) {
              const outcome = (['win', 'loss', 'tie'] as const)[
                random() < 0.55 ? 0 : random() < 0.85 ? 1 : 2
              ];
              const winner =
                outcome === 'tie' ? 'tie' : (outcome === 'win') === (order === 'candidate-first') ? 'A' : 'B';
              const judgmentUsage = usage(60_000, 2_000);
              rows.push(
                JudgmentRow.parse({
                  schemaVersion: 1,
                  kind: 'evaluation-judgment',
                  key: `evaluation/${name}/judgment/${task}/${condition}/${replicate}/${judge}/${seed}/${order}`,
                  sample: 'evaluation',
                  task,
                  condition,
                  replicate,
                  candidate: 'L1',
                  baseline: 'L0',
                  candidateEpisode: episodeOf('L1'),
                  baselineEpisode: episodeOf('L0'),
                  judge,
                  judgeModel: `${judge}-model`,
                  seed,
                  order,
                  status: 'ok',
                  outcome,
                  repairs: 0,
                  promptHashes: { system: 'a', user: 'b' },
                  attempts: [
                    {
                      rawOutput: JSON.stringify({ winner, rationale: prose(random, lexicon, 1_200) }),
                      finishReason: 'stop',
                      parse: { ok: true, winner, rationale: prose(random, lexicon, 1_200) },
                      usage: judgmentUsage,
                    },
                  ],
                  usage: judgmentUsage,
                  failure: null,
                }),
              );
              pairs.push({
                task,
                condition,
                replicate,
                candidate: 'L1',
                baseline: 'L0',
                judge,
                seed,
                order,
                outcome,
              });
            }
          }
        }
      }
    }
  }
  await writeFile(
    join(run, evaluationPath(name, 'judgments')),
    rows.map((row) => `${JSON.stringify(row)}\n`).join(''),
  );
  await writeFile(
    join(run, evaluationPath(name, 'grades')),
    grades.map((row) => `${JSON.stringify(row)}\n`).join(''),
  );
  const inputs = { judgments: pairs, rollouts, selectedRuns: [], agreementSamples: [] };
  const figures = computeEvaluationFigures(inputs, {
    comparisons: [{ candidate: 'L1', baseline: 'L0' }],
    reference: 'L0',
    pooledJudges: judges,
  });
  await EvaluationSummaryRecord.write(join(run, evaluationPath(name, 'summary')), {
    run: 'paper-sized',
    name,
    settings: {},
    models: [
      { name: 'L0', servedAs: BASE_MODEL, parent: null, standIn: null },
      { name: 'L1', servedAs: `${BASE_MODEL}-L1`, parent: 'L0', standIn: null },
    ],
    judges: judges.map((judge) => ({ name: judge, model: `${judge}-model`, standIn: null })),
    tasks,
    conditions: ['bare', 'workflow'],
    comparisons: [{ candidate: 'L1', baseline: 'L0' }],
    transfer: [],
    counts: {
      episodes: rollouts.length,
      failedEpisodes: 0,
      judgments: rows.length,
      repairedJudgments: 0,
      failedJudgments: 0,
      grades: grades.length,
      failedGrades: 0,
    },
    figures,
    inputs: { judgedPairs: pairs, rollouts, selectedRuns: [], agreementSamples: [], tasksWithoutGrader: [] },
  });
}
