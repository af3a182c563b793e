import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import {
  announceBudgetExhausted,
  BudgetExhaustedError,
  type BudgetExhaustedEvent,
} from '../../src/cost/budget-exhausted.js';
import { Notifier, type NotifyEvent } from '../../src/notify/notifier.js';
import { redactSecrets } from '../../src/notify/redact-secrets.js';
import type { CommandOutcome, CommandRunner } from '../../src/notify/run-command.js';
import { NOTIFICATIONS_FILE, RunNotifications } from '../../src/notify/run-notifications.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { notifySearchThenFailure, readOutcomes } from './notify-support.js';

const directory = temporaryDirectory('mass-notify-');
afterAll(() => directory.remove());

const run = { name: 'notify-test', directory: directory.path };

/** A command runner in this process: what each command was handed, and the outcome the test chooses. */
function recordingRunner(outcome: Partial<CommandOutcome> = {}): {
  runner: CommandRunner;
  events: NotifyEvent[];
  timeouts: number[];
} {
  const events: NotifyEvent[] = [];
  const timeouts: number[] = [];
  const runner: CommandRunner = async (_command, input, timeoutMs) => {
    events.push(JSON.parse(input) as NotifyEvent);
    timeouts.push(timeoutMs);
    return { status: 'sent', exitCode: 0, error: null, stderr: '', ...outcome };
  };
  return { runner, events, timeouts };
}

describe('Notifier', () => {
  it('hands the event as JSON, keys taken out, and records how it went', async () => {
    const key = 'sk-test-0123456789abcdef';
    process.env.MASS_NOTIFY_UNIT_KEY = key;
    try {
      const log = join(directory.path, 'unit-sent.jsonl');
      const { runner, events, timeouts } = recordingRunner();
      const notifier = new Notifier(
        { command: ['notify-me'], timeoutSeconds: 7, events: ['stage-finished', 'run-failed'] },
        log,
        ['MASS_NOTIFY_UNIT_KEY'],
        runner,
      );
      notifySearchThenFailure(notifier, run, key);
      await notifier.settle();
      expect(events).toMatchObject([
        {
          schemaVersion: 1,
          kind: 'stage-finished',
          run,
          command: 'mass rsi',
          stage: 'search',
          generation: 'L0',
        },
        { kind: 'run-failed', detail: 'refused key [redacted]' },
      ]);
      expect(timeouts).toEqual([7000, 7000]);
      expect(readOutcomes(log).map((line) => [line.event, line.status])).toEqual([
        ['stage-finished', 'sent'],
        ['run-failed', 'sent'],
      ]);
    } finally {
      delete process.env.MASS_NOTIFY_UNIT_KEY;
    }
  });

  it('a failing command is recorded, and a runner that throws is swallowed: the caller never sees either', async () => {
    const log = join(directory.path, 'unit-failed.jsonl');
    const failing = recordingRunner({ status: 'failed', exitCode: 7, error: 'exited with code 7' });
    const throwing: CommandRunner = () => Promise.reject(new Error('spawn exploded'));
    const settings = { command: ['notify-me'], timeoutSeconds: 1, events: ['run-failed' as const] };
    const notifiers = [
      new Notifier(settings, log, [], failing.runner),
      new Notifier(settings, log, [], throwing),
    ];
    for (const notifier of notifiers) {
      expect(() => notifier.notify({ kind: 'run-failed', run, command: 'mass eval' })).not.toThrow();
      await expect(notifier.settle()).resolves.toBeUndefined();
    }
    expect(readOutcomes(log)).toMatchObject([{ event: 'run-failed', status: 'failed', exitCode: 7 }]);
  });

  it('runs only for the events the configuration names, and not at all without notify', async () => {
    const { runner, events } = recordingRunner();
    const log = join(directory.path, 'unit-filtered.jsonl');
    const notifier = new Notifier(
      { command: ['x'], timeoutSeconds: 1, events: ['run-failed'] },
      log,
      [],
      runner,
    );
    notifier.notify({ kind: 'stage-finished', run, command: 'mass rsi', stage: 'search' });
    notifier.notify({ kind: 'run-failed', run, command: 'mass rsi' });
    const silent = new Notifier(undefined, log, [], runner);
    silent.notify({ kind: 'run-failed', run, command: 'mass rsi' });
    await Promise.all([notifier.settle(), silent.settle()]);
    expect(events.map((event) => event.kind)).toEqual(['run-failed']);
  });
});

describe('RunNotifications', () => {
  const config = parseRunConfig(
    {
      name: 'notify-test',
      suite: 'suites/demo',
      model: { kind: 'toy' },
      roles: { executor: { model: 'mass-toy' } },
      notify: { command: ['notify-me'] },
    },
    'the test configuration',
  );

  it('tells of a failed run and lets the error through unchanged', async () => {
    const { runner, events } = recordingRunner();
    const notifications = new RunNotifications(config, directory.path, 'mass eval', runner);
    const failure = new Error('the judge server is gone');
    await expect(notifications.around(() => Promise.reject(failure))).rejects.toBe(failure);
    expect(events).toMatchObject([
      { kind: 'run-failed', command: 'mass eval', detail: 'the judge server is gone' },
    ]);
    expect(readOutcomes(join(directory.path, NOTIFICATIONS_FILE)).at(-1)).toMatchObject({ status: 'sent' });
  });

  it('tells of a budget that ran out as such, not as a failure', async () => {
    const { runner, events } = recordingRunner();
    const notifications = new RunNotifications(config, directory.path, 'mass eval', runner);
    const event: BudgetExhaustedEvent = {
      kind: 'budget-exhausted',
      budget: 'budgets.cost.stages.evaluation',
      unit: 'usd',
      limit: 5,
      spent: 5.01,
      stage: 'evaluation',
      label: 'judgment L1-vs-L0',
      role: 'judge',
      at: new Date().toISOString(),
    };
    const work = async () => {
      announceBudgetExhausted(event);
      throw new BudgetExhaustedError(event);
    };
    await expect(notifications.around(work)).rejects.toBeInstanceOf(BudgetExhaustedError);
    expect(events).toMatchObject([
      {
        kind: 'budget-exhausted',
        stage: 'evaluation',
        detail: 'budgets.cost.stages.evaluation ran out',
        budget: { limit: 5, spent: 5.01, role: 'judge' },
      },
    ]);
    // The listener is gone with the command: a later budget event reaches no one.
    announceBudgetExhausted(event);
    expect(events).toHaveLength(1);
  });

  it('tells of a stage finished while the work goes on, and returns what the work returns', async () => {
    const { runner, events } = recordingRunner();
    const notifications = new RunNotifications(config, directory.path, 'mass rsi', runner);
    const result = await notifications.around(async () => {
      notifications.stageFinished('search', 'L0');
      return 42;
    });
    expect(result).toBe(42);
    expect(events).toMatchObject([{ kind: 'stage-finished', stage: 'search', generation: 'L0' }]);
  });
});

describe('redactSecrets', () => {
  it('takes out secret-looking variables and the named ones, as written and as JSON escapes them', () => {
    const environment = {
      OPENAI_API_KEY: 'sk-"quoted"-secret',
      MY_ENDPOINT: 'endpoint-value-1',
      SHORT_TOKEN: 'abc',
    };
    const text = `a ${JSON.stringify({ detail: 'sk-"quoted"-secret' })} endpoint-value-1 abc`;
    expect(redactSecrets(text, ['MY_ENDPOINT'], environment)).toBe(
      'a {"detail":"[redacted]"} [redacted] abc',
    );
  });
});
