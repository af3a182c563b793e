import { describe, expect, it } from 'vitest';

import { parseRunConfig, type RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE, demoConfig } from '../../src/demo/demo-config.js';
import { describePlan, describePlanCompact } from '../../src/plan/describe-plan.js';
import { chooseThroughput } from '../../src/plan/doctor-throughput.js';
import { collectionWork, firstRoundPairs, searchWork, tournamentWork } from '../../src/plan/loop-work.js';
import { planCost } from '../../src/plan/plan-cost.js';
import type { StageWork } from '../../src/plan/plan-types.js';
import { planRun, type RunPlan } from '../../src/plan/run-plan.js';

/** A stage's four counts, `count` and `upTo` each, for one comparison. */
function counts(stage: StageWork | undefined) {
  if (!stage) throw new Error('no such stage in the plan');
  const { episodes, judgments, judgeCalls, optimizerCalls } = stage;
  return { episodes, judgments, judgeCalls, optimizerCalls };
}

function stage(plan: RunPlan, name: StageWork['stage'], generation: string | null): StageWork | undefined {
  return plan.stages.find((entry) => entry.stage === name && entry.generation === generation);
}

const exactly = (count: number) => ({ count, upTo: count });

function config(changes: Record<string, unknown>): RunConfig {
  return parseRunConfig(
    {
      name: 'plan-test',
      suite: 'suites/demo',
      model: { kind: 'toy' },
      roles: { executor: { model: 'mass-toy' } },
      ...changes,
    },
    'the test configuration',
  );
}

describe('mass plan on the demo configuration', () => {
  // The demo: 2 tasks, 1 search iteration, 4 champion runs (2 top-ups at most), a ring of 2 opponents, judgments in one
  // drawn order; the evaluation compares L0, L1, L2 (L1–L0, L2–L0, L2–L1) on 2 tasks, 2 rollouts, the toy judge and
  // the self-judge, 2 seeds, both orders, and samples each distilled task's 4 tournament matches.
  const demo = demoConfig('demo');

  it('counts every stage as the stages plan it, every search beating its reference', async () => {
    const plan = await planRun({ config: demo, suiteDir: DEMO_SUITE, rounds: 2, scope: 'all' });
    expect(plan.stages.map((entry) => `${entry.generation ?? ''} ${entry.stage}`.trim())).toEqual([
      'L0 search',
      'L0 collection',
      'L0 tournament',
      'L0 training',
      'L1 search',
      'L1 collection',
      'L1 tournament',
      'L1 training',
      'evaluation',
    ]);
    for (const generation of ['L0', 'L1']) {
      // Per task: the reference, v0 and v1; v0 and v1 judged once each; one optimizer call.
      expect(counts(stage(plan, 'search', generation))).toEqual({
        episodes: exactly(6),
        judgments: exactly(4),
        judgeCalls: exactly(4),
        optimizerCalls: exactly(2),
      });
      expect(counts(stage(plan, 'collection', generation)).episodes).toEqual({ count: 8, upTo: 12 });
      // A ring of 4 runs, 2 opponents each: 4 pairs per task.
      expect(counts(stage(plan, 'tournament', generation)).judgeCalls).toEqual(exactly(8));
    }
    // 3 comparisons × 2 tasks × 2 rollouts × 2 judges × 2 seeds = 48 steps, and 2 generations × 2 tasks × 4 matches
    // × 1 external judge × 2 seeds = 32 sampled: 80 steps of 2 orders.
    expect(counts(stage(plan, 'evaluation', null))).toEqual({
      episodes: exactly(12),
      judgments: exactly(80),
      judgeCalls: exactly(160),
      optimizerCalls: exactly(0),
    });
    expect(plan.totals.episodes).toEqual({ count: 40, upTo: 48 });
    expect(plan.totals.judgeCalls).toEqual(exactly(184));
  });

  it('with the searches’ outcome given (L1: one of two beat its reference), as the demo recorded it', async () => {
    const plan = await planRun({
      config: demo,
      suiteDir: DEMO_SUITE,
      rounds: 2,
      scope: 'all',
      winning: [2, 1],
    });
    expect(counts(stage(plan, 'collection', 'L1')).episodes).toEqual({ count: 4, upTo: 6 });
    expect(counts(stage(plan, 'tournament', 'L1')).judgeCalls).toEqual(exactly(4));
    expect(counts(stage(plan, 'evaluation', null)).judgeCalls).toEqual(exactly(144));
    expect(plan.totals.episodes.count).toBe(36);
    expect(plan.outcome).toContain('L1 1 of 2 (given)');
  });

  it('says what each figure rests on, and prices each priced endpoint', async () => {
    const priced = config({
      roles: {
        executor: { model: 'mass-toy' },
        judge: { model: 'mass-toy', prices: { input: 1, output: 10 } },
      },
      budgets: { episodeOutputBudget: 50_000, judgeBundleTokens: 10_000, judgeMaxTokens: 2_000 },
      search: { iterations: 2 },
    });
    const plan = await planRun({
      config: priced,
      suiteDir: DEMO_SUITE,
      rounds: 1,
      scope: 'loop',
      throughput: (await chooseThroughput({ config: priced, given: 400, recordPath: '/nowhere' })).throughput,
    });
    const judge = plan.roles.find((role) => role.role === 'judge')!;
    // Search: 3 judgments per task; tournament: the ring of 18 runs, 6 opponents: 54 per task; 2 tasks, 1 order.
    expect(judge.units).toBe(2 * (3 + 54));
    expect(judge.promptTokens).toEqual({ value: 114 * 20_000, basis: 'budget' });
    expect(judge.completionTokens).toEqual({ value: 114 * 2_000, basis: 'budget' });
    const executor = plan.roles.find((role) => role.role === 'executor')!;
    expect(executor.completionTokens).toEqual({ value: executor.units * 50_000, basis: 'budget' });
    const cost = planCost(plan.roles);
    expect(cost.endpoints).toEqual([
      { role: 'judge', usd: { value: (114 * 20_000 * 1 + 114 * 2_000 * 10) / 1e6, basis: 'budget' } },
    ]);
    expect(cost.unpriced).toEqual(['executor', 'optimizer']);
    const text = describePlan(plan, cost);
    expect(text).toContain('(doctor throughput: 400 output tokens/s (--throughput))');
    expect(text).toContain('input not bounded by any budget (give --like)');
    expect(text).toContain('Cost: $');
    // Episodes: 2 tasks × (reference, v0, v1, v2) + 2 × 18 champion runs (6 top-ups each at most).
    expect(describePlanCompact(plan, cost, 'mass rsi')).toMatch(
      /^mass rsi: plan: 44 \(≤ 56\) episodes, 114 judge calls/,
    );
  });

  it('trains the toy with one step on the CPU, and a served model with its configured steps', async () => {
    const plan = (model: RunConfig) =>
      planRun({ config: model, suiteDir: DEMO_SUITE, rounds: 1, scope: 'loop' });
    expect((await plan(config({}))).training).toMatchObject({ steps: 1, windowsPerStep: 0 });
    const served = config({
      model: { kind: 'served' },
      roles: { executor: { model: 'qwen', baseUrl: 'http://127.0.0.1:9/v1' } },
      rsi: { hyperparameters: { steps: 40, batchSize: 8 } },
    });
    expect((await plan(served)).training).toMatchObject({ steps: 40, windowsPerStep: 8 });
  });

  it('times the demo by its harness, not by an assumed throughput, unless one is given', async () => {
    const demoPlan = await planRun({ config: demo, suiteDir: DEMO_SUITE, rounds: 2, scope: 'loop' });
    // The demo's loop: 2 rounds of 6 search and 8 champion episodes, 2 at once, about 8 s each, and 2 toy trainings.
    expect(demoPlan.time.missing).toEqual([]);
    expect(demoPlan.time.seconds).toBeGreaterThan(60);
    expect(demoPlan.time.seconds).toBeLessThan(5 * 60);
    expect(demoPlan.time.basis).toContain('the built-in toy model answers at once');
    const text = describePlanCompact(demoPlan, planCost(demoPlan.roles), 'mass demo');
    expect(text).not.toContain('run mass doctor');
    const given = await planRun({
      config: demo,
      suiteDir: DEMO_SUITE,
      rounds: 2,
      scope: 'loop',
      throughput: (await chooseThroughput({ config: demo, given: 50, recordPath: '/nowhere' })).throughput,
    });
    expect(given.time.basis).toContain('(--throughput)');
    expect(given.time.seconds).toBeGreaterThan(demoPlan.time.seconds);
  });
});

describe('the stages’ counts', () => {
  it('the official champion rule may add an arbitration per iteration; both orders double the judge calls', () => {
    const work = searchWork(
      config({ search: { iterations: 3, championRule: 'official', judgeMode: 'both' } }),
      2,
      'L0',
    );
    expect(work.judgments).toEqual({ count: 8, upTo: 14 });
    expect(work.judgeCalls).toEqual({ count: 16, upTo: 28 });
    expect(work.optimizerCalls).toEqual(exactly(6));
  });

  it('search noise reruns the reference at least, every promoted design at most', () => {
    const work = searchWork(config({ search: { iterations: 1, repeats: 2 } }), 1, 'L0');
    // 3 episodes + 2 reruns of the reference (up to 2 for each of 3 designs); each design's 3 runs judged pairwise.
    expect(work.episodes).toEqual({ count: 5, upTo: 9 });
    expect(work.judgments).toEqual({ count: 2 + 3, upTo: 2 + 9 + 2 * 2 });
  });

  it('tournaments follow the schedule the stage plays', () => {
    expect(firstRoundPairs(config({}), 18)).toBe(54);
    // An odd number of players each meeting an odd number: one opponent fewer.
    expect(firstRoundPairs(config({ distill: { ringOpponents: 3, runs: 5, needed: 5, train: 4 } }), 5)).toBe(
      5,
    );
    expect(firstRoundPairs(config({ distill: { schedule: 'round-robin' } }), 6)).toBe(15);
    expect(firstRoundPairs(config({}), 1)).toBe(0);
    const adaptive = tournamentWork(config({ distill: { schedule: 'adaptive' } }), 1, 'L0');
    // The ring of 4 opponents for 18 runs (36), then up to 3 rounds of 6.
    expect(adaptive.judgments).toEqual({ count: 36, upTo: 54 });
    const single = collectionWork(config({ distill: { singleAgentCollection: true } }), 3, 'L0');
    expect(single.episodes).toEqual({ count: 108, upTo: 144 });
  });
});
