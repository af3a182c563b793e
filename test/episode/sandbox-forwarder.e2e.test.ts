import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { DEFAULT_FORWARDER_PORT } from '../../src/episode/sandbox.js';
import type { ProxyLogRow } from '../../src/proxy/log-row.js';
import { startRecordingProxy, type RecordingProxy } from '../../src/proxy/recording-proxy.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { readProxyLog } from '../support/fixtures.js';
import { MODES, capture, openSandbox, type SandboxFixture } from './sandbox-helpers.js';

/** A client inside the sandbox, as agent code would be: streams one chat completion from $BASE_URL. */
const CLIENT_PYTHON = `
import json, os, urllib.request
body = json.dumps({'model': 'scripted-model', 'stream': True,
                   'messages': [{'role': 'user', 'content': 'from inside the sandbox'}]}).encode()
request = urllib.request.Request(os.environ['BASE_URL'] + '/v1/chat/completions', data=body,
                                 headers={'content-type': 'application/json'})
with urllib.request.urlopen(request, timeout=10) as response:
    text = response.read().decode()
content = ''
for line in text.splitlines():
    if line.startswith('data: ') and line != 'data: [DONE]':
        for choice in json.loads(line[6:])['choices']:
            content += choice['delta'].get('content') or ''
print(content)
`;

/** Eight clients at once, as concurrent subagents would be; prints the sorted answers. */
const PARALLEL_CLIENTS_PYTHON = `
import json, os, urllib.request
from concurrent.futures import ThreadPoolExecutor
def ask(index):
    body = json.dumps({'model': 'scripted-model', 'messages': [{'role': 'user', 'content': str(index)}]}).encode()
    request = urllib.request.Request(os.environ['BASE_URL'] + '/v1/chat/completions', data=body,
                                     headers={'content-type': 'application/json'})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())['choices'][0]['message']['content']
with ThreadPoolExecutor(8) as pool:
    print(' '.join(sorted(pool.map(ask, range(8)))))
`;

describe.each(MODES)(
  'sandbox forwarder (%s): the proxy on a Unix socket is reachable from inside',
  (mode) => {
    let server: ScriptedServer;
    let proxy: RecordingProxy;
    let fixture: SandboxFixture;
    let logFile: string;

    beforeEach(async () => {
      server = await startScriptedServer({ chunkSize: 4 });
      fixture = await openSandbox(mode, ({ root }) => {
        mkdirSync(join(root, 'proxy'));
        return { proxySocketPath: join(root, 'proxy', 'proxy.sock') };
      });
      logFile = join(fixture.root, 'requests.jsonl');
      proxy = await startRecordingProxy({
        upstream: server.url,
        listen: { socketPath: join(fixture.root, 'proxy', 'proxy.sock') },
        logFile,
      });
    });
    afterEach(async () => {
      await proxy.close();
      await server.close();
      await fixture.close();
    });

    it('relays a streamed completion and the proxy records it', async () => {
      server.enqueue(step.text('answered through the forwarder'));
      const output = capture();
      const errors = capture();
      const result = await fixture.sandbox.run({
        command: 'python3',
        args: ['-c', CLIENT_PYTHON],
        env: { BASE_URL: fixture.sandbox.proxyBaseUrl! },
        stdout: output.sink,
        stderr: errors.sink,
        limits: { wallClockSeconds: 20 },
      });
      expect(result.exitCode, errors.text()).toBe(0);
      expect(output.text().trim()).toBe('answered through the forwarder');
      const rows = await waitForRows(logFile, 1);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        status: 200,
        stream: true,
        request: { messages: [{ role: 'user', content: 'from inside the sandbox' }] },
        response: {
          kind: 'completion',
          completion: { message: { content: 'answered through the forwarder' } },
        },
      });
      if (mode === 'bubblewrap') {
        expect(fixture.sandbox.proxyBaseUrl).toBe(`http://127.0.0.1:${DEFAULT_FORWARDER_PORT}`);
      }
    });

    it('relays concurrent connections', async () => {
      for (let index = 0; index < 8; index++) server.enqueue(step.text(`answer-${index}`, { delayMs: 100 }));
      const output = capture();
      const errors = capture();
      const result = await fixture.sandbox.run({
        command: 'python3',
        args: ['-c', PARALLEL_CLIENTS_PYTHON],
        env: { BASE_URL: fixture.sandbox.proxyBaseUrl! },
        stdout: output.sink,
        stderr: errors.sink,
        limits: { wallClockSeconds: 20 },
      });
      expect(result.exitCode, errors.text()).toBe(0);
      expect(output.text().trim()).toBe([...Array(8).keys()].map((index) => `answer-${index}`).join(' '));
      expect(await waitForRows(logFile, 8)).toHaveLength(8);
    });
  },
);

/** Rows are written when a request ends, just after the client has its answer. */
async function waitForRows(logFile: string, count: number): Promise<ProxyLogRow[]> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const rows = readProxyLog(logFile);
    if (rows.length >= count) return rows;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return readProxyLog(logFile);
}

describe('sandbox forwarder: absent without a proxy socket', () => {
  it('has no proxy URL', async () => {
    const fixture = await openSandbox('bubblewrap');
    try {
      expect(fixture.sandbox.proxyBaseUrl).toBeNull();
    } finally {
      await fixture.close();
    }
  });
});
