import { describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { BEFORE_FIRST_BYTE_FAULTS, FaultPlan } from '../../src/config/fault-plan.js';
import { modelKind } from '../../src/hosting/model-kind.js';
import { FaultInjector } from '../../src/toy/fault-injection.js';
import { startScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
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

  it("a toy run's faults are set once, on model: { kind: toy }, and the toy model it serves injects them", async () => {
    const run = (model: unknown) => ({
      name: 'faulty',
      suite: 'suites/demo',
      model,
      roles: { executor: { model: 'mass-toy' } },
    });
    const config = parseRunConfig(run({ kind: 'toy', faults: { rate: 1, kinds: [503] } }), 'faulty.yaml');
    const served = await modelKind(config).host.serveBase();
    try {
      const response = await postCompletion(served.endpoints.executor.baseUrl!.replace(/\/v1$/, ''), {
        model: 'mass-toy',
      });
      expect(response.status).toBe(503);
    } finally {
      await served.close();
    }
    expect(() => parseRunConfig(run({ kind: 'served', faults: { rate: 0.1 } }), 'real.yaml')).toThrow(
      /real\.yaml: model: Unrecognized key: "faults"/,
    );
  });
});
