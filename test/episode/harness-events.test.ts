import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { summariseHarnessEvents } from '../../src/harness/harness-events.js';
import { temporaryDirectory } from '../support/fixtures.js';

const directory = temporaryDirectory();
afterAll(() => directory.remove());

const assistantEvent = (text: string) =>
  JSON.stringify({
    type: 'assistant',
    parent_tool_use_id: null,
    message: { content: [{ type: 'text', text }] },
  });
const resultEvent = JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'done' });

describe('the harness’s event log, which agent code can write into', () => {
  it('reads an event log with a 1 GiB line of NULs (two bytes written at 1 GiB) without holding it, counting it unreadable', async () => {
    const file = join(directory.path, 'sparse-events.jsonl');
    writeFileSync(file, `${assistantEvent('working')}\n${resultEvent}\n`);
    const descriptor = openSync(file, 'r+');
    writeSync(descriptor, Buffer.from('xx'), 0, 2, 1024 ** 3);
    closeSync(descriptor);

    const summary = await summariseHarnessEvents(file);
    expect(summary).toMatchObject({
      events: 2,
      unreadableLines: 1,
      lastAssistantText: 'working',
      result: { subtype: 'success', text: 'done' },
    });
  });
});
