import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { Notifier, type NotifyEvent } from '../../src/notify/notifier.js';
import { notifySearchThenFailure, readOutcomes } from '../notify/notify-support.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { sharedToySearch } from '../support/shared-runs.js';

const directory = temporaryDirectory('mass-plan-notify-');
afterAll(() => directory.remove());

interface PlanJson {
  stages: Array<{
    stage: string;
    generation: string | null;
    episodes: { count: number; upTo: number };
    judgments: { count: number };
    judgeCalls: { count: number };
    optimizerCalls: { count: number };
    seconds: { value: number; basis: string } | null;
  }>;
  like: { name: string; recorded: PlanJson['stages'] };
}

describe('mass plan --like on a recorded toy search', () => {
  it("predicts the search's episodes, judgments and calls exactly as its records count them", async () => {
    // Built by whichever file asks first (test/support/shared-runs.ts): this one may wait for it.
    const shared = await sharedToySearch();
    expect(shared.result.code, shared.result.stderr).toBe(0);
    const result = await runMass([
      'plan',
      '--config',
      shared.configFile,
      '--only',
      'loop',
      '--like',
      shared.run,
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const plan = JSON.parse(result.stdout) as PlanJson;
    const planned = plan.stages.find((stage) => stage.stage === 'search' && stage.generation === 'L0')!;
    const recorded = plan.like.recorded.find(
      (stage) => stage.stage === 'search' && stage.generation === 'L0',
    )!;
    // The reference and v0 on one task, v0 judged once, no iteration.
    expect(planned.episodes).toEqual({ count: 2, upTo: 2 });
    for (const field of ['episodes', 'judgments', 'judgeCalls', 'optimizerCalls'] as const) {
      expect(planned[field].count, field).toBe(recorded[field].count);
    }
    expect(planned.seconds!.basis).toBe(`measured in ${plan.like.name}`);
  }, 600_000);
});

describe('a notification command', () => {
  it('reads the event as JSON on its standard input, with none of the run’s keys in its environment', async () => {
    const key = 'sk-e2e-0123456789abcdef';
    process.env.MASS_NOTIFY_E2E_API_KEY = key;
    const inbox = join(directory.path, 'inbox.jsonl');
    const environment = join(directory.path, 'environment.txt');
    const log = join(directory.path, 'notifications.jsonl');
    try {
      const notifier = new Notifier(
        {
          command: ['sh', '-c', `cat >> '${inbox}'; env > '${environment}'`],
          timeoutSeconds: 20,
          events: ['stage-finished', 'run-failed', 'budget-exhausted'],
        },
        log,
      );
      const run = { name: 'e2e', directory: directory.path };
      // Notifications go one at a time, in the order of their events.
      notifySearchThenFailure(notifier, run, key);
      await notifier.settle();
    } finally {
      delete process.env.MASS_NOTIFY_E2E_API_KEY;
    }
    const events = readFileSync(inbox, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as NotifyEvent);
    expect(events).toMatchObject([
      { kind: 'stage-finished', stage: 'search', generation: 'L0' },
      { kind: 'run-failed', detail: 'refused key [redacted]' },
    ]);
    const seen = readFileSync(environment, 'utf8');
    expect(seen).not.toContain(key);
    expect(seen).toContain('PATH=');
    expect(readOutcomes(log).map((outcome) => outcome.status)).toEqual(['sent', 'sent']);
  });

  it('that fails, cannot start or hangs is recorded as such and never raised', async () => {
    const log = join(directory.path, 'failing.jsonl');
    const settings = (command: string[], timeoutSeconds = 20) => ({
      command,
      timeoutSeconds,
      events: ['run-failed' as const],
    });
    const notifiers = [
      new Notifier(settings(['sh', '-c', 'echo no route >&2; exit 7']), log),
      new Notifier(settings([join(directory.path, 'no-such-program')]), log),
      new Notifier(settings(['sleep', '30'], 0.5), log),
    ];
    const run = { name: 'e2e', directory: directory.path };
    for (const notifier of notifiers) notifier.notify({ kind: 'run-failed', run, command: 'mass eval' });
    await Promise.all(notifiers.map((notifier) => notifier.settle()));
    const outcomes = readOutcomes(log);
    expect(outcomes).toHaveLength(3);
    expect(outcomes).toContainEqual(
      expect.objectContaining({
        status: 'failed',
        exitCode: 7,
        error: 'exited with code 7',
        stderr: 'no route\n',
      }),
    );
    expect(outcomes).toContainEqual(
      expect.objectContaining({ status: 'failed', exitCode: null, error: expect.stringContaining('ENOENT') }),
    );
    expect(outcomes).toContainEqual(
      expect.objectContaining({ status: 'timed-out', error: 'killed after 0.5 s' }),
    );
  });
});
