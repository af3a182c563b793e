import { beforeAll, describe, expect, it } from 'vitest';

import { Evaluation } from '../../src/config/evaluation-settings.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import {
  describeTransferPlan,
  planTransfers,
  transferLabel,
  transferRecord,
  type SearchRecords,
} from '../../src/evaluate/transfer-plan.js';
import type { TaskSearchResult } from '../../src/records/search-records.js';
import { loadSuite } from '../../src/tasks/load-suite.js';
import type { LoadedTask } from '../../src/tasks/load-task.js';
import { workflowHash } from '../../src/workflow/render.js';
import type { TeamDesign } from '../../src/workflow/workflow.js';

type Champion = Pick<TaskSearchResult, 'champion' | 'championDesign'>;

const design = (tag: string): TeamDesign => ({ schemaVersion: 1, text: `The team of ${tag}.` }) as TeamDesign;

/** Search records in memory: generation → task → champion. */
function searches(records: Record<string, Record<string, Champion>>): SearchRecords {
  return {
    searchedTasks: (generation) => Promise.resolve(Object.keys(records[generation] ?? {}).sort()),
    result: (generation, task) => Promise.resolve(records[generation]![task]!),
  };
}

let suiteTasks: LoadedTask[];
beforeAll(async () => {
  suiteTasks = (await loadSuite(DEMO_SUITE)).tasks;
});

const L1_DESIGN = design('L1 on potency');
const L0_DESIGN = design('L0 on potency');
const RECORDS = {
  L0: {
    'demo-potency': { champion: 'v2', championDesign: L0_DESIGN },
    // L0's search never beat the bare task here.
    'demo-volatility': { champion: 'reference', championDesign: null },
  },
  L1: {
    'demo-potency': { champion: 'v5', championDesign: L1_DESIGN },
    'demo-volatility': { champion: 'v1', championDesign: design('L1 on volatility') },
  },
  L2: { 'demo-potency': { champion: 'v0', championDesign: L1_DESIGN } },
};

const plan = (entries: unknown[], extra: { models?: string[]; taskIds?: string[] } = {}) =>
  planTransfers({
    entries: Evaluation.parse({ transfer: entries }).transfer,
    models: extra.models ?? ['L0', 'L1'],
    suiteTasks,
    ...(extra.taskIds ? { taskIds: extra.taskIds } : {}),
    searches: searches(RECORDS),
  });

describe('planning a workflow transfer', () => {
  it('runs the executor with each side’s champion designs on the tasks both searches finished', async () => {
    const [transfer] = await plan([{ executor: 'L0', designsFrom: 'L1' }]);
    expect(transfer).toMatchObject({
      executor: 'L0',
      designsFrom: 'L1',
      against: 'L0',
      candidate: 'L0-with-L1-designs',
      baseline: 'L0-with-L0-designs',
      leftOut: [],
    });
    expect(transfer!.tasks.map((task) => task.task.manifest.id)).toEqual(['demo-potency', 'demo-volatility']);
    const [potency, volatility] = transfer!.tasks;
    expect(potency!.candidate).toEqual({
      generation: 'L1',
      champion: 'v5',
      design: L1_DESIGN,
      designHash: workflowHash(L1_DESIGN),
    });
    expect(potency!.baseline.designHash).toBe(workflowHash(L0_DESIGN));
    // A search that never beat its reference: the side runs the bare task, recorded as such.
    expect(volatility!.baseline).toEqual({
      generation: 'L0',
      champion: 'reference',
      design: null,
      designHash: null,
    });
    expect(describeTransferPlan(transfer!)).toBe(
      "transfer: L0-with-L1-designs against L0-with-L0-designs on demo-potency, demo-volatility (tasks both L1's and L0's searches finished); " +
        "L0's search never beat the bare task on demo-volatility: run bare there",
    );
  });

  it('intersects with evaluation.tasks and with the other search, says what it left out, and records each side’s design', async () => {
    const [transfer] = await plan([{ executor: 'L1', designsFrom: 'L2', against: 'L1' }], {
      taskIds: ['demo-volatility', 'demo-potency'],
    });
    expect(transfer!.tasks.map((task) => task.task.manifest.id)).toEqual(['demo-potency']);
    expect(transfer!.leftOut).toEqual([
      { task: 'demo-volatility', reason: 'no search/L2/demo-volatility/result.json' },
    ]);
    // L2's champion is the same design as L1's: a pair that differs by its sampling alone, and the record says so.
    expect(transferRecord(transfer!)).toEqual({
      executor: 'L1',
      designsFrom: 'L2',
      against: 'L1',
      candidate: 'L1-with-L2-designs',
      baseline: 'L1-with-L1-designs',
      tasks: [
        {
          task: 'demo-potency',
          candidate: { generation: 'L2', champion: 'v0', designHash: workflowHash(L1_DESIGN) },
          baseline: { generation: 'L1', champion: 'v5', designHash: workflowHash(L1_DESIGN) },
          sameDesign: true,
        },
      ],
      leftOut: [{ task: 'demo-volatility', reason: 'no search/L2/demo-volatility/result.json' }],
    });
  });

  it('an entry’s own tasks stand in for evaluation.tasks (which its generation comparisons may need as test tasks)', async () => {
    const [transfer] = await plan([{ executor: 'L0', designsFrom: 'L1', tasks: ['demo-volatility'] }], {
      taskIds: ['demo-potency'],
    });
    expect(transfer!.tasks.map((task) => task.task.manifest.id)).toEqual(['demo-volatility']);
    await expect(plan([{ executor: 'L0', designsFrom: 'L1', tasks: ['demo-nope'] }])).rejects.toThrow(
      'evaluation.transfer[0].tasks: demo-nope is not in the suite; its tasks: demo-potency, demo-volatility',
    );
    await expect(plan([{ executor: 'L0', designsFrom: 'L2', tasks: ['demo-volatility'] }])).rejects.toThrow(
      /among evaluation\.transfer\[0\]\.tasks \(missing: search\/L2\/demo-volatility\/result\.json\)/,
    );
  });

  it('refuses what cannot be a transfer, naming the field and what to do', async () => {
    await expect(plan([{ executor: 'L3', designsFrom: 'L1' }])).rejects.toThrow(
      'evaluation.transfer[0].executor: "L3" is not a model of this evaluation; they are L0, L1',
    );
    await expect(plan([{ executor: 'L0', designsFrom: 'L1', against: 'L1' }])).rejects.toThrow(
      'evaluation.transfer[0]: designsFrom and against are both L1',
    );
    await expect(plan([{ executor: 'L0', designsFrom: 'L7' }])).rejects.toThrow(
      'evaluation.transfer[0]: no task has finished searches of both L7 and L0 (search/L7/ holds no finished search; search/L0/ holds demo-potency, demo-volatility). Run those searches first',
    );
    await expect(
      plan([{ executor: 'L0', designsFrom: 'L2' }], { taskIds: ['demo-volatility'] }),
    ).rejects.toThrow(/among evaluation\.tasks \(missing: search\/L2\/demo-volatility\/result\.json\)/);
    await expect(
      plan([{ executor: 'L0', designsFrom: 'L1' }], { models: ['L0', 'L0-with-L1-designs'] }),
    ).rejects.toThrow(/its label "L0-with-L1-designs" is also the name of a model/);
    await expect(
      plan([
        { executor: 'L0', designsFrom: 'L1' },
        { executor: 'L0', designsFrom: 'L1', against: 'L0' },
      ]),
    ).rejects.toThrow(
      'evaluation.transfer[1]: L0-with-L1-designs against L0-with-L0-designs is already an entry',
    );
  });

  it('labels are path-safe: only the names generations and models may have', () => {
    expect(transferLabel('L0', 'L1')).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
    expect(() => Evaluation.parse({ transfer: [{ executor: 'L0', designsFrom: 'L1+x' }] })).toThrow();
    expect(() => Evaluation.parse({ transfer: [{ executor: '../L0', designsFrom: 'L1' }] })).toThrow();
  });
});
