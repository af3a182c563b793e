import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { egressCountsOf, readEgressLog } from '../../src/proxy/egress-log.js';
import { startEgressProxy, type EgressProxy } from '../../src/proxy/egress-proxy.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { exchangeOnSocket, startEchoServer } from './egress-proxy-support.js';

describe('the egress proxy', () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  let proxy: EgressProxy;
  let socketPath: string;
  let logFile: string;

  beforeEach(async () => {
    directory = temporaryDirectory('mass-egress-');
    echo = await startEchoServer();
    socketPath = join(directory.path, 'egress.sock');
    logFile = join(directory.path, 'egress.jsonl');
    proxy = await startEgressProxy({
      allow: [`127.0.0.1:${echo.port}`],
      // The test's server is on the host's loopback: the run configuration opens it, as it would a lab's server.
      privateDestinations: [`127.0.0.1:${echo.port}`],
      socketPath,
      logFile,
    });
  });
  afterEach(async () => {
    await proxy.close();
    await echo.close();
    directory.remove();
  });

  const request = (line: string, body = '') =>
    `${line}\r\nHost: x\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

  it('forwards an absolute-URI request to an allowed host and port, and logs its verdict and bytes', async () => {
    const answer = await exchangeOnSocket(
      socketPath,
      request(`POST http://127.0.0.1:${echo.port}/upload?x=1 HTTP/1.1`, 'twelve bytes'),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('echo POST /upload?x=1 12 bytes');
    await proxy.close();
    const { rows } = await readEgressLog(logFile);
    expect(rows).toEqual([
      expect.objectContaining({
        method: 'POST',
        host: '127.0.0.1',
        port: echo.port,
        verdict: 'allowed',
        reason: null,
        status: 200,
        bytesUp: 12,
        bytesDown: 'echo POST /upload?x=1 12 bytes\n'.length,
      }),
    ]);
  });

  it('passes on neither hop-by-hop headers nor those a Connection header names, either way', async () => {
    const answer = await exchangeOnSocket(
      socketPath,
      `GET http://127.0.0.1:${echo.port}/ HTTP/1.1\r\nHost: x\r\nConnection: close, X-Agent-Hop\r\n` +
        `X-Agent-Hop: for the proxy only\r\nProxy-Authorization: Basic c2VjcmV0\r\nX-Kept: yes\r\n\r\n`,
    );
    const received = /x-received-headers: (.*)\r\n/i.exec(answer)?.[1]?.split(',');
    expect(received).toContain('x-kept');
    expect(received).not.toContain('x-agent-hop');
    expect(received).not.toContain('proxy-authorization');
    expect(answer).not.toMatch(/x-server-hop/i);
  });

  it('refuses another port with a 403 and a one-line reason, and never connects', async () => {
    const answer = await exchangeOnSocket(
      socketPath,
      request(`GET http://127.0.0.1:${echo.port + 1}/ HTTP/1.1`),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer.split('\r\n\r\n')[1]).toBe(
      `mass egress proxy: 127.0.0.1:${echo.port + 1}: the task allows this host on port ${echo.port} only\n`,
    );
    const refusedConnect = await exchangeOnSocket(
      socketPath,
      `CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(refusedConnect).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    await proxy.close();
    const { rows } = await readEgressLog(logFile);
    expect(rows.map((row) => [row.method, row.port, row.verdict, row.status])).toEqual([
      ['GET', echo.port + 1, 'refused', 403],
      ['CONNECT', 22, 'refused', 403],
    ]);
  });

  it('answers hostile and malformed input with 400 or 431, logs it, and keeps serving', async () => {
    const answers = [
      await exchangeOnSocket(socketPath, request('GET / HTTP/1.1')),
      await exchangeOnSocket(socketPath, request('GET https://127.0.0.1/ HTTP/1.1')),
      await exchangeOnSocket(socketPath, 'CONNECT nonsense HTTP/1.1\r\n\r\n'),
      await exchangeOnSocket(socketPath, '\u0000\u0001 garbage\r\n\r\n'),
      await exchangeOnSocket(
        socketPath,
        `GET http://127.0.0.1:${echo.port}/ HTTP/1.1\r\nX: ${'a'.repeat(40_000)}\r\n\r\n`,
      ),
    ];
    expect(answers.map((answer) => answer.slice(0, 12))).toEqual([
      'HTTP/1.1 400',
      'HTTP/1.1 400',
      'HTTP/1.1 400',
      'HTTP/1.1 400',
      'HTTP/1.1 431',
    ]);
    expect(answers[1]).toContain('https:// URLs go through CONNECT host:443');
    // Half-open: a request line and no end of headers, left hanging while another request is served.
    const hanging = connect({ path: socketPath });
    hanging.on('error', () => {});
    const hangingClosed = new Promise((resolve) => hanging.once('close', resolve));
    hanging.write(`GET http://127.0.0.1:${echo.port}/ HTTP/1.1\r\nHost: x\r\n`);
    const served = await exchangeOnSocket(
      socketPath,
      request(`GET http://127.0.0.1:${echo.port}/still HTTP/1.1`),
    );
    expect(served).toContain('echo GET /still');
    await proxy.close();
    await hangingClosed; // the proxy's close ends it; it does not keep the proxy open
    const read = await readEgressLog(logFile);
    expect(read.rows.filter((row) => row.verdict === 'refused')).toHaveLength(5);
    expect(read.rows.filter((row) => row.status === 400 || row.status === 431)).toHaveLength(5);
    expect(egressCountsOf(read.rows)).toEqual({ ...proxy.counts(), unloggedRequests: 0 });
  });

  it('counts requests past the row bound without writing them', async () => {
    await proxy.close();
    proxy = await startEgressProxy({ allow: ['127.0.0.1:1'], socketPath, logFile, maxLoggedRequests: 2 });
    for (let index = 0; index < 4; index++) await exchangeOnSocket(socketPath, request('GET / HTTP/1.1'));
    await vi.waitUntil(() => proxy.counts().requestsRefused === 4);
    expect(proxy.counts()).toMatchObject({ requestsRefused: 4, unloggedRequests: 2 });
    await proxy.close();
    expect(readFileSync(logFile, 'utf8').trim().split('\n')).toHaveLength(2);
  });
});
