import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { DEFAULT_EGRESS_FORWARDER_PORT } from '../../src/episode/sandbox.js';
import { readEgressLog } from '../../src/proxy/egress-log.js';
import { startEgressProxy, type EgressProxy } from '../../src/proxy/egress-proxy.js';
import { startEchoServer } from '../proxy/egress-proxy-support.js';
import { MODES, capture, openSandbox, type SandboxFixture } from './sandbox-helpers.js';

/**
 * Agent code as it would reach the network: curl through the proxy variables the sandbox sets (`--noproxy ''`
 * because the test's server is on the host's loopback, which NO_PROXY keeps direct for the model), a port the task
 * does not allow, a CONNECT tunnel carrying plain HTTP (`-p`, closed: a tunnel carries TLS only), a TLS tunnel
 * (curl's own ClientHello, passed on to the plain-HTTP server, whose answer ends the handshake), and a direct
 * connection that must find nothing.
 */
const AGENT_SCRIPT = `
echo "http_proxy=$http_proxy HTTPS_PROXY=$HTTPS_PROXY PIP_PROXY=$PIP_PROXY NO_PROXY=$NO_PROXY"
echo "allowed=$(curl -s --noproxy '' --max-time 10 -d hello http://127.0.0.1:$PORT/allowed)"
echo "other=$(curl -s --noproxy '' --max-time 10 -o /dev/null -w '%{http_code}' http://127.0.0.1:$OTHER_PORT/refused)"
echo "tunnel=$(curl -s --noproxy '' --max-time 10 -p http://127.0.0.1:$PORT/tunnelled)"
curl -s -k --noproxy '' --max-time 10 https://127.0.0.1:$PORT/tls >/dev/null; echo "tls=$?"
python3 -c "
import socket
try:
    socket.create_connection(('127.0.0.1', $PORT), timeout=2).close(); print('direct=reached')
except OSError as error:
    print('direct=' + type(error).__name__)
"
test -e "$LOG" && echo log=visible || echo log=hidden
`;

describe.each(MODES)('egress by allow-list (%s)', (mode) => {
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  let other: Awaited<ReturnType<typeof startEchoServer>>;
  let egress: EgressProxy;
  let fixture: SandboxFixture;
  let logFile: string;

  beforeEach(async () => {
    echo = await startEchoServer();
    // A server the task does not list: reachable from the host, never through the proxy.
    other = await startEchoServer();
    fixture = await openSandbox(mode, ({ root }) => {
      mkdirSync(join(root, 'egress'));
      return { egressSocketPath: join(root, 'egress', 'egress.sock') };
    });
    logFile = join(fixture.root, 'egress.jsonl');
    egress = await startEgressProxy({
      allow: [`127.0.0.1:${echo.port}`],
      // The test's server is on the host's loopback: opened as a run configuration would open it.
      privateDestinations: [`127.0.0.1:${echo.port}`],
      socketPath: join(fixture.root, 'egress', 'egress.sock'),
      logFile,
    });
  });
  afterEach(async () => {
    await egress.close();
    await fixture.close();
    await echo.close();
    await other.close();
  });

  it('reaches the allowed host and port through the proxy, is refused elsewhere, and every request is logged', async () => {
    const output = capture();
    const errors = capture();
    const result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', AGENT_SCRIPT],
      env: { PORT: String(echo.port), OTHER_PORT: String(other.port), LOG: logFile },
      stdout: output.sink,
      stderr: errors.sink,
      limits: { wallClockSeconds: 60 },
    });
    expect(result.exitCode, errors.text()).toBe(0);
    const text = output.text();
    const url = fixture.sandbox.egressProxyUrl!;
    if (mode === 'bubblewrap') expect(url).toBe(`http://127.0.0.1:${DEFAULT_EGRESS_FORWARDER_PORT}`);
    expect(text).toContain(
      `http_proxy=${url} HTTPS_PROXY=${url} PIP_PROXY=${url} NO_PROXY=127.0.0.1,localhost`,
    );
    expect(text).toContain('allowed=echo POST /allowed 5 bytes');
    expect(text).toContain('other=403');
    expect(text).toContain('tunnel=\n');
    // 35: the TLS handshake failed, at the plain-HTTP server's answer; the proxy let curl's hello through.
    expect(text).toContain('tls=35');
    if (mode === 'bubblewrap') {
      // Only the forwarder's ports exist on the sandbox's loopback, and the log is out of its sight.
      expect(text).toContain('direct=ConnectionRefusedError');
      expect(text).toContain('log=hidden');
    }
    await egress.close();
    const { rows, skippedLines } = await readEgressLog(logFile);
    expect(skippedLines).toBe(0);
    expect(rows.map((row) => [row.method, row.host, row.port, row.verdict, row.status])).toEqual([
      ['POST', '127.0.0.1', echo.port, 'allowed', 200],
      ['GET', '127.0.0.1', other.port, 'refused', 403],
      ['CONNECT', '127.0.0.1', echo.port, 'refused', 403],
      ['CONNECT', '127.0.0.1', echo.port, 'allowed', 200],
    ]);
    expect(rows[0]).toMatchObject({ bytesUp: 5, bytesDown: 'echo POST /allowed 5 bytes\n'.length });
    expect(rows[1]).toMatchObject({ bytesUp: 0, bytesDown: 0, reason: expect.stringContaining('port') });
    expect(rows[2]).toMatchObject({ bytesUp: 0, bytesDown: 0 });
    expect(rows[2]!.reason).toMatch(
      /^a tunnel carries TLS only; it got not TLS: the first byte is 0x47 \("GET \/tunnelled/,
    );
    // curl's ClientHello went to the server whole, and the server's 400 came back.
    expect(rows[3]!.bytesUp).toBeGreaterThan(200);
    expect(rows[3]!.bytesDown).toBeGreaterThan(0);
    expect(egress.counts()).toMatchObject({ requestsAllowed: 2, requestsRefused: 2 });
    expect(existsSync(logFile)).toBe(true);
  });
});

describe('a sandbox whose task allows no network', () => {
  it('sets no proxy variable and has no egress forwarder', async () => {
    const fixture = await openSandbox('bubblewrap');
    try {
      const output = capture();
      const result = await fixture.sandbox.run({
        command: '/bin/sh',
        args: [
          '-c',
          `env | grep -ci proxy; curl -s --max-time 5 -x http://127.0.0.1:${DEFAULT_EGRESS_FORWARDER_PORT} http://example.com/ || echo "curl=$?"`,
        ],
        stdout: output.sink,
        limits: { wallClockSeconds: 30 },
      });
      expect(result.exitCode).toBe(0);
      expect(fixture.sandbox.egressProxyUrl).toBeNull();
      expect(output.text()).toBe('0\ncurl=7\n');
    } finally {
      await fixture.close();
    }
  });
});
