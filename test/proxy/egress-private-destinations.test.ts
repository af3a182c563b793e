import { describe, expect, it } from 'vitest';

import { startEgressProxy } from '../../src/proxy/egress-proxy.js';
import { egressTestBed, startTls, throughTunnel } from './egress-proxy-support.js';

/** What a hostile resolver answers for the task's names. */
const RESOLVER: Record<string, string[]> = {
  'internal.example': ['127.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'mapped.example': ['::ffff:127.0.0.1'],
  'lab.example': ['10.0.0.5'],
  // Its first answer is the metadata address, its second the host's loopback.
  'mixed.example': ['169.254.169.254', '127.0.0.1'],
};

/**
 * Loopback, private and link-local destinations are the run configuration's to open, never the task's: a task that
 * lists an IP address, or a name that resolves to one, reaches the host's model server, its Redis or the cloud's
 * metadata endpoint only where `privateDestinations` says so. The test's server is on the loopback, so each test
 * names what the configuration opens.
 */
describe('non-public destinations through the egress proxy', () => {
  const bed = egressTestBed('mass-private-');
  const { get, rows } = bed;
  const start = (privateDestinations?: string[]) =>
    bed.start({
      allow: [
        `127.0.0.1:${bed.echo.port}`,
        `[::ffff:127.0.0.1]:${bed.echo.port}`,
        `internal.example:${bed.echo.port}`,
        `mapped.example:${bed.echo.port}`,
        `mixed.example:${bed.echo.port}`,
        `internal.example:${bed.sink.port}`,
        '169.254.169.254',
        'metadata.example',
        'lab.example:8000',
      ],
      ...(privateDestinations === undefined ? {} : { privateDestinations }),
      lookup: async (host) => RESOLVER[host] ?? [],
    });

  it('refuses an IP address the task lists, and a name that resolves to one, with the reason logged', async () => {
    await start();
    const answers = [
      await get(`http://127.0.0.1:${bed.echo.port}/model`),
      await get(`http://[::ffff:127.0.0.1]:${bed.echo.port}/redis`),
      await get(`http://internal.example:${bed.echo.port}/`),
      await get(`http://mapped.example:${bed.echo.port}/`),
      await get('http://169.254.169.254/latest/meta-data/'),
      await get('http://metadata.example/computeMetadata/v1/'),
      await get('http://lab.example:8000/'),
    ];
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    const tunnel = await throughTunnel(bed.socketPath, `internal.example:${bed.sink.port}`, (socket) =>
      startTls(socket, 'internal.example'),
    );
    expect(tunnel.answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(bed.reached).toBe(0);
    expect(bed.sink.received).toHaveLength(0);
    const logged = await rows();
    expect(logged.map((row) => [row.verdict, row.status])).toEqual(Array(8).fill(['refused', 403]));
    const opens = '; only the run configuration opens such a destination (network.privateDestinations)';
    expect(logged.map((row) => row.reason)).toEqual([
      `127.0.0.1:${bed.echo.port} is a loopback address (127.0.0.0/8)${opens}`,
      `[::ffff:7f00:1]:${bed.echo.port} is a loopback address (127.0.0.0/8), inside IPv6${opens}`,
      `internal.example:${bed.echo.port} resolves to 127.0.0.1, a loopback address (127.0.0.0/8)${opens}`,
      `mapped.example:${bed.echo.port} resolves to ::ffff:127.0.0.1, a loopback address (127.0.0.0/8), inside IPv6${opens}`,
      `169.254.169.254:80 is a cloud metadata address (169.254.169.254/32)${opens}`,
      `metadata.example:80 resolves to 169.254.169.254, a cloud metadata address (169.254.169.254/32)${opens}`,
      `lab.example:8000 resolves to 10.0.0.5, a private address (10.0.0.0/8)${opens}`,
      `internal.example:${bed.sink.port} resolves to 127.0.0.1, a loopback address (127.0.0.0/8)${opens}`,
    ]);
  });

  it('reaches them where the run configuration opens them, by name or by address and port', async () => {
    await start(['internal.example', `127.0.0.1:${bed.echo.port}`]);
    expect(await get(`http://internal.example:${bed.echo.port}/by-name`)).toContain('echo GET /by-name');
    expect(await get(`http://127.0.0.1:${bed.echo.port}/by-address`)).toContain('echo GET /by-address');
    await throughTunnel(bed.socketPath, `internal.example:${bed.sink.port}`, (socket) =>
      startTls(socket, 'internal.example'),
    );
    expect(bed.sink.received).toHaveLength(1);
    // Opened for the echo server's port only: the metadata address stays closed.
    expect(await get('http://169.254.169.254/latest/meta-data/')).toMatch(/^HTTP\/1\.1 403 /);
    expect(bed.reached).toBe(2);
    expect((await rows()).map((row) => row.verdict)).toEqual(['allowed', 'allowed', 'allowed', 'refused']);
  });

  it('checks every address a name resolves to and connects to one that passed', async () => {
    await start([`127.0.0.1:${bed.echo.port}`]);
    // The metadata address comes first and is skipped; the connection goes to the loopback address that was opened.
    expect(await get(`http://mixed.example:${bed.echo.port}/checked`)).toContain('echo GET /checked');
    expect(bed.reached).toBe(1);
  });

  it('refuses a configuration entry that is not a host', async () => {
    await expect(
      startEgressProxy({
        allow: [],
        privateDestinations: ['http://10.0.0.5/'],
        socketPath: bed.socketPath,
        logFile: bed.logFile,
      }),
    ).rejects.toThrow(/network\.privateDestinations: "http:\/\/10\.0\.0\.5\/" is a URL, not a host/);
  });
});
