import { describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { serveToyModel } from '../../src/rsi/generation-serving.js';
import { BASE_TOY_WEIGHTS } from '../../src/testing/toy-model/weights.js';
import { BEFORE_FIRST_BYTE_FAULTS, FaultInjector, FaultPlan } from '../../src/testing/fault-injection.js';
import { startScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/testing/steps.js';
import { postCompletion, sseData } from '../support/fixtures.js';

describe('fault injection', () => {
  it('draws the same faults from the same plan, at about the planned rate, of every kind asked for', () => {
    const draw = (seed: number) => {
      const injector = new FaultInjector({ rate: 0.1, seed });
      return Array.from({ length: 2_000 }, () => injector.next());
    };
    const first = draw(3);
    expect(draw(3)).toEqual(first);
    expect(draw(4)).not.toEqual(first);
    const faults = first.flatMap((decision) => (decision.kind === 'none' ? [] : [decision.fault]));
    expect(faults.length).toBeGreaterThan(150);
    expect(faults.length).toBeLessThan(250);
    const kinds = new Set(faults);
    expect([...kinds].sort()).toEqual([...BEFORE_FIRST_BYTE_FAULTS].sort());
  });

  it('reads the kinds as a configuration writes them: statuses as numbers', () => {
    expect(
      FaultPlan.parse({ rate: 0.1, kinds: [503, 429, 'reset', 'drop_mid_stream', 'hang'], seed: 1 }),
    ).toEqual({
      rate: 0.1,
      kinds: ['503', '429', 'reset', 'drop_mid_stream', 'hang'],
      seed: 1,
      hangSeconds: 2,
      retryAfterSeconds: 1,
    });
    expect(() => FaultPlan.parse({ rate: 0.1, kinds: [418] })).toThrow();
    expect(() => FaultPlan.parse({ rate: 1.5 })).toThrow();
  });

  it('a server with faults answers some requests with them, before asking its responder, and cuts streams mid-way', async () => {
    let asked = 0;
    const server = await startScriptedServer({
      responder: () => {
        asked++;
        return step.text('a whole answer, in several pieces', { chunkSize: 4 });
      },
      faults: { rate: 1, kinds: ['503'] },
    });
    try {
      const response = await postCompletion(server.url, {});
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ error: { message: 'injected fault (503)' } });
      expect(asked).toBe(0);
      expect(server.faults!.injected.get('503')).toBe(1);
    } finally {
      await server.close();
    }

    const cutting = await startScriptedServer({
      responder: () => step.text('a whole answer, in several pieces', { chunkSize: 4 }),
      faults: { rate: 1, kinds: ['drop_mid_stream'] },
    });
    try {
      const response = await postCompletion(cutting.url, { stream: true });
      expect(response.status).toBe(200);
      let text = '';
      const reader = response.body!.getReader();
      await expect(
        (async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            text += Buffer.from(value).toString();
          }
        })(),
      ).rejects.toThrow();
      const events = sseData(text);
      expect(events.length).toBeGreaterThan(1);
      expect(events).not.toContain('[DONE]');
    } finally {
      await cutting.close();
    }
  });

  it("a toy run's configuration puts its faults on the toy model it serves, and only on the toy", async () => {
    const toy = (faults: unknown, provider = 'toy') => ({
      name: 'faulty',
      suite: 'suites/demo',
      roles: { executor: { provider, model: 'mass-toy', baseUrl: 'http://127.0.0.1:1/v1', faults } },
      rsi: {
        trainer: { kind: provider === 'toy' ? 'toy' : 'python' },
        deploy: { kind: provider === 'toy' ? 'toy' : 'lora' },
      },
    });
    const config = parseRunConfig(toy({ rate: 1, kinds: [503] }), 'faulty.yaml');
    const served = await serveToyModel(config, BASE_TOY_WEIGHTS, 'mass-toy');
    try {
      const response = await postCompletion(served.endpoints.executor.baseUrl!.replace(/\/v1$/, ''), {
        model: 'mass-toy',
      });
      expect(response.status).toBe(503);
    } finally {
      await served.close();
    }
    expect(() => parseRunConfig(toy({ rate: 0.1 }, 'openai-compatible'), 'real.yaml')).toThrow(
      /roles\.executor\.faults: only the toy model injects faults/,
    );
  });
});
