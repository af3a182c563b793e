import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { runMass } from '../support/cli.js';
import { readProxyLog, temporaryDirectory } from '../support/fixtures.js';

describe('mass demo', () => {
  it('records a toy team’s calls in a run directory, and a second run skips what is done', async () => {
    const directory = temporaryDirectory();
    const out = join(directory.path, 'demo');
    const first = await runMass(['demo', '--out', out, '--json']);
    expect(first.code).toBe(0);
    const summary = JSON.parse(first.stdout) as { requests: number; threads: Record<string, number> };
    expect(summary).toMatchObject({ requests: 7, threads: { 'orchestrator calls': 3, 'subagent calls': 4 } });
    for (const file of ['config.yaml', 'mass.db']) expect(existsSync(join(out, file))).toBe(true);

    const logFile = join(out, 'episodes', 'demo-0', 'requests.jsonl');
    const rows = readProxyLog(logFile);
    expect(rows).toHaveLength(7);
    const delegations = rows.flatMap((row) =>
      row.response?.kind === 'completion' ? (row.response.completion.message.tool_calls ?? []) : [],
    );
    expect(delegations.filter((call) => call.function.name === 'agent')).toHaveLength(2);
    expect(rows.every((row) => row.stream && row.error === null)).toBe(true);

    const modified = statSync(logFile).mtimeMs;
    const second = await runMass(['demo', '--out', out, '--json']);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual(JSON.parse(first.stdout));
    expect(statSync(logFile).mtimeMs).toBe(modified);
    directory.remove();
  });
});
