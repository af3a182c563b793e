import { describe, expect, it } from 'vitest';

import { Evaluation, evaluationConfig } from '../../src/config/evaluation-settings.js';
import { parseRunConfig } from '../../src/config/run-config.js';

const run = (evaluation: Record<string, unknown>) =>
  parseRunConfig(
    {
      name: 'settings',
      suite: 'suites/demo',
      roles: { executor: { baseUrl: 'http://127.0.0.1:9/v1', model: 'base' } },
      evaluation,
    },
    'test',
  );

describe('the evaluation settings', () => {
  it('judges every pair in both orders and transfers nothing, by default', () => {
    expect(evaluationConfig({})).toMatchObject({ orders: 'both', transfer: [] });
    expect(evaluationConfig(run({}))).toMatchObject({ orders: 'both', transfer: [] });
  });

  it('orders: random, the official protocol; anything else refused with the field named', () => {
    expect(evaluationConfig(run({ orders: 'random' })).orders).toBe('random');
    expect(() => run({ orders: 'shuffled' })).toThrow(/evaluation\.orders/);
  });

  it('transfer entries: executor and designsFrom required, against optional, nothing else', () => {
    expect(
      evaluationConfig(
        run({
          comparisons: [],
          transfer: [
            { executor: 'L0', designsFrom: 'L1' },
            { executor: 'L1', designsFrom: 'L2', against: 'L0' },
          ],
        }),
      ),
    ).toMatchObject({
      comparisons: [],
      transfer: [
        { executor: 'L0', designsFrom: 'L1' },
        { executor: 'L1', designsFrom: 'L2', against: 'L0' },
      ],
    });
    expect(() => Evaluation.parse({ transfer: [{ executor: 'L0' }] })).toThrow(/designsFrom/);
    expect(() => run({ transfer: [{ executor: 'L0', designsFrom: 'L1', from: 'L2' }] })).toThrow(
      /evaluation\.transfer\.0/,
    );
    expect(() => run({ transfer: [{ executor: 'L0', designsFrom: 'L1/../x' }] })).toThrow(/letters, digits/);
  });
});
