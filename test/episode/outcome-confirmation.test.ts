import { describe, expect, it } from 'vitest';

import { classifyOutcome, type OutcomeEvidence } from '../../src/episode/outcome.js';
import { chatRow } from '../support/chat-row.js';

/** A run the harness reports as a success, its process exiting cleanly, no model call failing. */
function evidence(resultText: string | null, final: OutcomeEvidence['orchestratorFinal']): OutcomeEvidence {
  return {
    harness: {
      result: { subtype: 'success', isError: false, text: resultText, numTurns: 2 },
      lastAssistantText: resultText,
      events: 5,
      unreadableLines: 0,
    },
    orchestratorFinal: final,
    lastToolCalls: [{ name: 'agent', input: '{"prompt":"work"}', parentToolUseId: null }],
    stoppedByForgedRequest: null,
    process: { exitCode: 0, signal: null, timedOut: false, limitExceeded: null },
    rows: [],
    tamperedPaths: [],
    outputBudgetSpent: false,
  };
}

describe('a successful result the proxy must confirm', () => {
  it('is a success when it is the orchestrator’s last recorded response, a final answer', () => {
    expect(
      classifyOutcome(evidence('Done: total = 10.', { seq: 4, text: 'Done: total = 10.\n', toolCalls: 0 })),
    ).toEqual({
      status: 'success',
      failure: null,
    });
  });

  it('is no success when its text is not that response (a `result` event agent code wrote)', () => {
    const outcome = classifyOutcome(
      evidence('FORGED RESULT', { seq: 4, text: 'Done: total = 10.', toolCalls: 0 }),
    );
    expect(outcome.status).toBe('failure');
    expect(outcome.failure).toMatchObject({ kind: 'unconfirmed_result' });
    expect(outcome.failure?.detail).toMatch(/not the orchestrator's last recorded response \(#4\)/);
    expect(outcome.failure?.lastToolCalls).toHaveLength(1);
  });

  it('is no success when the orchestrator’s last response still asks for tools, or there is none', () => {
    expect(classifyOutcome(evidence('', { seq: 2, text: '', toolCalls: 1 })).failure).toMatchObject({
      kind: 'unconfirmed_result',
      detail: expect.stringMatching(/asks for 1 tool call\(s\): no final answer/),
    });
    expect(classifyOutcome(evidence('Done.', null)).failure).toMatchObject({
      kind: 'unconfirmed_result',
      detail: expect.stringMatching(/recorded no response of the orchestrator/),
    });
  });

  it('blames a failed request agent code posted itself for stopping the harness, not the model server', () => {
    const outcome = classifyOutcome({
      ...evidence(null, null),
      harness: { result: null, lastAssistantText: null, events: 3, unreadableLines: 0 },
      process: { exitCode: null, signal: 'SIGKILL', timedOut: false, limitExceeded: null },
      stoppedByForgedRequest: 7,
    });
    expect(outcome.failure).toMatchObject({
      kind: 'sandbox_violation',
      detail: expect.stringMatching(
        /agent code posted chat requests .* \(#7\) failed, which stopped the harness/,
      ),
    });
  });
});

describe('the harness’s own API error text', () => {
  /** The harness printed an API error as its last text and ended without a result. */
  function endedOnApiErrorText(rows: OutcomeEvidence['rows']): OutcomeEvidence {
    return {
      ...evidence(null, null),
      harness: { result: null, lastAssistantText: 'API Error: 503 upstream', events: 4, unreadableLines: 0 },
      process: { exitCode: 1, signal: null, timedOut: false, limitExceeded: null },
      rows,
    };
  }
  const answered = [chatRow(1, [{ role: 'user', content: 'task' }], { content: 'ok' })];

  it('is believed when no model call was recorded (no agent code could run) or a harness call was abandoned', () => {
    expect(classifyOutcome(endedOnApiErrorText([])).failure).toMatchObject({ kind: 'api_error' });
    const abandoned = chatRow(
      2,
      [{ role: 'user', content: 'more' }],
      { content: null },
      {
        clientDisconnected: true,
        status: null,
      },
    );
    expect(classifyOutcome(endedOnApiErrorText([...answered, abandoned])).failure).toMatchObject({
      kind: 'api_error',
    });
  });

  it('says the harness never started when the sandbox’s own set-up failed, whatever the exit code', () => {
    const unstarted = classifyOutcome({
      ...evidence(null, null),
      harness: { result: null, lastAssistantText: null, events: 0, unreadableLines: 0 },
      process: { exitCode: 1, signal: null, timedOut: false, limitExceeded: null, started: false },
    });
    expect(unstarted.failure).toMatchObject({
      kind: 'harness_crash',
      detail:
        "the harness never started: the sandbox's own set-up failed, each of the 2 times it was opened (exit 1); its words are in harness-stderr.log",
    });
    const started = classifyOutcome({
      ...evidence(null, null),
      harness: { result: null, lastAssistantText: null, events: 0, unreadableLines: 0 },
      process: { exitCode: 1, signal: null, timedOut: false, limitExceeded: null, started: true },
    });
    expect(started.failure?.detail).toBe('the harness exited with code 1 without a final result');
  });

  it('is the harness’s crash when every recorded call was answered: agent code can print it and kill the harness', () => {
    expect(classifyOutcome(endedOnApiErrorText(answered)).failure).toMatchObject({
      kind: 'harness_crash',
      detail: 'the harness exited with code 1 without a final result',
    });
  });
});
