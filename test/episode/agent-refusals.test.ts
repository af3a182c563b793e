import { afterEach, describe, expect, it } from 'vitest';

import { episodeFacts } from '../../src/episode/episode-facts.js';
import { classifyOutcome } from '../../src/episode/outcome.js';
import type { ProxyLogRow } from '../../src/proxy/log-row.js';
import { step } from '../../src/toy/steps.js';
import { postCompletion, scriptedServerBehindProxy, type ProxyFixture } from '../support/fixtures.js';
import { rawRequest, sendRaw } from '../proxy/proxy-clients.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function behindProxy(): Promise<ProxyFixture> {
  const fixture = await scriptedServerBehindProxy({}, { maxRequestBytes: 4096 });
  cleanups.push(fixture.close);
  return fixture;
}

/** A request as the harness's orchestrator sends it. */
const HARNESS_CALL = {
  messages: [
    { role: 'system', content: 'You are Qwen Code, an interactive CLI agent.' },
    { role: 'user', content: 'Sum the numbers.' },
  ],
};

/** The outcome of an episode whose harness ended without a final result, from the rows the proxy wrote. */
function outcomeOf(rows: ProxyLogRow[]) {
  const facts = episodeFacts(rows);
  return {
    facts,
    outcome: classifyOutcome({
      harness: { result: null, lastAssistantText: null, events: 3, unreadableLines: 0 },
      orchestratorFinal: facts.orchestratorFinal,
      lastToolCalls: facts.lastToolCalls,
      stoppedByForgedRequest: null,
      process: { exitCode: 1, signal: null, timedOut: false, limitExceeded: null },
      rows: rows.filter((row) => !facts.forgedRequests.has(row.seq)),
      tamperedPaths: [],
      outputBudgetSpent: false,
    }),
  };
}

describe('requests the proxy refused, in the episode outcome', () => {
  it('counts malformed, off-route and oversized requests as agent code’s, never as a failure of the model server', async () => {
    const fixture = await behindProxy();
    const port = Number(new URL(fixture.proxy.url).port);
    fixture.server.enqueue(step.text('the harness’s call'));
    expect((await postCompletion(fixture.proxy.url, HARNESS_CALL)).status).toBe(200);
    // What agent code can send the proxy from inside the sandbox, each refused before reaching the model server.
    expect((await sendRaw(port, rawRequest('GET', '/v1/models', '{"x": 1}'))).status).toBe(400);
    expect((await sendRaw(port, 'HELLO THERE\r\n\r\n')).status).toBe(400);
    expect((await sendRaw(port, rawRequest('POST', '/v1/chat/completions', '[1, 2]'))).status).toBe(400);
    expect((await sendRaw(port, rawRequest('GET', '/v1/secrets'))).status).toBeGreaterThanOrEqual(400);
    const tooLarge = await postCompletion(fixture.proxy.url, {
      messages: [{ role: 'user', content: 'x'.repeat(8192) }],
    });
    expect(tooLarge.status).toBe(413);
    const rows = await fixture.waitForRows(6);
    expect(rows.map((row) => row.refusal ?? null).sort()).toEqual(
      ['malformed', 'malformed', 'malformed', 'not_forwarded', 'too_large', null].sort(),
    );
    expect(fixture.server.requests).toHaveLength(1);

    const { facts, outcome } = outcomeOf(rows);
    const refused = rows.filter((row) => row.refusal != null).map((row) => row.seq);
    expect([...facts.forgedRequests].sort()).toEqual(refused.sort());
    expect(facts.forged.requests).toBe(5);
    expect(outcome.failure?.kind).toBe('harness_crash');
  });

  it('still calls a failure of the model server an api_error', async () => {
    const fixture = await behindProxy();
    fixture.server.enqueue(step.status(400, { message: 'the server could not take it' }));
    expect((await postCompletion(fixture.proxy.url, HARNESS_CALL)).status).toBe(400);
    const rows = await fixture.waitForRows(1);
    expect(rows[0]!.refusal).toBeNull();
    const { facts, outcome } = outcomeOf(rows);
    expect(facts.forgedRequests.size).toBe(0);
    expect(outcome.failure?.kind).toBe('api_error');
  });
});
