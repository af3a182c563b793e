import { describe, expect, it } from 'vitest';

import { ANY_PUBLIC_HOST } from '../../src/proxy/egress-allow-list.js';
import { egressTestBed, startTls, throughTunnel } from './egress-proxy-support.js';

/** Public addresses (none in a documentation or other reserved range) and the names that resolve to them. */
const PUBLIC_ADDRESS = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';
const RESOLVER: Record<string, string[]> = {
  'files.example.org': [PUBLIC_ADDRESS],
  'v6.example.org': [PUBLIC_V6],
  'internal.example.org': ['127.0.0.1'],
  'metadata.example.org': ['169.254.169.254'],
  'lab.example.org': ['10.0.0.5'],
  localhost: ['127.0.0.1'],
};

/**
 * Every public host, as a public benchmark's task that asks for the internet gets it (`ANY_PUBLIC_HOST`): no host is
 * listed, any name and port pass the host check, and the address check alone decides. The servers are on the test's
 * loopback: the proxy's `route` sends the public addresses there after every check was made on the public address,
 * and the loopback itself stays refused unless the run configuration opens it.
 */
describe('the egress proxy giving every public host', () => {
  const bed = egressTestBed('mass-public-');
  const { get, rows } = bed;
  const start = (privateDestinations: string[] = []) =>
    bed.start({
      allow: ANY_PUBLIC_HOST,
      privateDestinations,
      lookup: async (host) => RESOLVER[host] ?? [],
      // A public address's plain HTTP goes to the echo server, its tunnels to the byte sink; the rest as asked.
      route: (address, port) =>
        address === PUBLIC_ADDRESS || address === PUBLIC_V6
          ? { host: '127.0.0.1', port: port === 443 || port === 8443 ? bed.sink.port : bed.echo.port }
          : { host: address, port },
    });

  it('lets a public host through on any port, by name or address, each request logged', async () => {
    await start();
    expect(await get('http://files.example.org/simple/')).toContain('echo GET /simple/');
    expect(await get('http://files.example.org:8080/any-port')).toContain('echo GET /any-port');
    expect(await get(`http://${PUBLIC_ADDRESS}/by-address`)).toContain('echo GET /by-address');
    expect(await get('http://v6.example.org/ipv6')).toContain('echo GET /ipv6');
    const tunnel = await throughTunnel(bed.socketPath, 'files.example.org:443', (socket) =>
      startTls(socket, 'files.example.org'),
    );
    expect(tunnel.answer).toBe('HTTP/1.1 200 Connection Established');
    expect(bed.sink.received).toHaveLength(1);
    expect(bed.sink.received[0]!.includes(Buffer.from('files.example.org'))).toBe(true);
    expect(bed.reached).toBe(4);
    const logged = await rows();
    expect(logged.map((row) => [row.method, row.host, row.port, row.verdict, row.status])).toEqual([
      ['GET', 'files.example.org', 80, 'allowed', 200],
      ['GET', 'files.example.org', 8080, 'allowed', 200],
      ['GET', PUBLIC_ADDRESS, 80, 'allowed', 200],
      ['GET', 'v6.example.org', 80, 'allowed', 200],
      ['CONNECT', 'files.example.org', 443, 'allowed', 200],
    ]);
  });

  it('refuses loopback, private, link-local and metadata destinations, by name or address, with the reason logged', async () => {
    await start();
    const answers = [
      await get(`http://127.0.0.1:${bed.echo.port}/model`),
      await get(`http://localhost:${bed.echo.port}/model`),
      await get(`http://internal.example.org:${bed.echo.port}/redis`),
      await get(`http://[::ffff:127.0.0.1]:${bed.echo.port}/mapped`),
      await get('http://169.254.169.254/latest/meta-data/'),
      await get('http://metadata.example.org/computeMetadata/v1/'),
      await get('http://lab.example.org:8000/'),
      await get('http://unknown.example.org/'),
    ];
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    const tunnel = await throughTunnel(bed.socketPath, `internal.example.org:${bed.sink.port}`, (socket) =>
      startTls(socket, 'internal.example.org'),
    );
    expect(tunnel.answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(bed.reached).toBe(0);
    expect(bed.sink.received).toHaveLength(0);
    const logged = await rows();
    expect(logged.map((row) => [row.verdict, row.status])).toEqual(Array(9).fill(['refused', 403]));
    const opens = '; only the run configuration opens such a destination (network.privateDestinations)';
    expect(logged.map((row) => row.reason)).toEqual([
      `127.0.0.1:${bed.echo.port} is a loopback address (127.0.0.0/8)${opens}`,
      `localhost:${bed.echo.port} resolves to 127.0.0.1, a loopback address (127.0.0.0/8)${opens}`,
      `internal.example.org:${bed.echo.port} resolves to 127.0.0.1, a loopback address (127.0.0.0/8)${opens}`,
      `[::ffff:7f00:1]:${bed.echo.port} is a loopback address (127.0.0.0/8), inside IPv6${opens}`,
      `169.254.169.254:80 is a cloud metadata address (169.254.169.254/32)${opens}`,
      `metadata.example.org:80 resolves to 169.254.169.254, a cloud metadata address (169.254.169.254/32)${opens}`,
      `lab.example.org:8000 resolves to 10.0.0.5, a private address (10.0.0.0/8)${opens}`,
      'unknown.example.org: resolves to no address',
      `internal.example.org:${bed.sink.port} resolves to 127.0.0.1, a loopback address (127.0.0.0/8)${opens}`,
    ]);
  });

  it('reaches a non-public destination only where the run configuration opens it', async () => {
    await start([`127.0.0.1:${bed.echo.port}`]);
    expect(await get(`http://internal.example.org:${bed.echo.port}/opened`)).toContain('echo GET /opened');
    // Opened for the echo server's port only.
    expect(await get('http://internal.example.org:8000/closed')).toMatch(/^HTTP\/1\.1 403 /);
    expect(await get('http://169.254.169.254/latest/meta-data/')).toMatch(/^HTTP\/1\.1 403 /);
    expect(bed.reached).toBe(1);
    expect((await rows()).map((row) => row.verdict)).toEqual(['allowed', 'refused', 'refused']);
  });

  it('keeps a tunnel bound to its host: a TLS hello naming another server closes it before it is connected', async () => {
    await start();
    const fronted = await throughTunnel(bed.socketPath, 'files.example.org:443', (socket) =>
      startTls(socket, 'other.example.net'),
    );
    expect(fronted.answer).toBe('HTTP/1.1 200 Connection Established');
    const plain = await throughTunnel(bed.socketPath, 'files.example.org:8443', (socket) =>
      socket.write('GET / HTTP/1.1\r\nHost: other.example.net\r\n\r\n'),
    );
    expect(plain.answer).toBe('HTTP/1.1 200 Connection Established');
    const port80 = await throughTunnel(bed.socketPath, 'files.example.org:80', () => {});
    expect(port80.answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(bed.sink.received).toHaveLength(0);
    expect(bed.reached).toBe(0);
    const logged = await rows();
    expect(logged.map((row) => [row.port, row.verdict, row.status])).toEqual([
      [443, 'refused', 403],
      [8443, 'refused', 403],
      [80, 'refused', 403],
    ]);
    expect(logged[0]!.reason).toMatch(/other\.example\.net/);
    expect(logged[2]!.reason).toMatch(/CONNECT to port 80 is refused/);
  });
});
