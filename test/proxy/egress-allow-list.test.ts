import { describe, expect, it } from 'vitest';

import { ANY_PUBLIC_HOST, EgressAllowList, parseAllowEntry } from '../../src/proxy/egress-allow-list.js';

describe('network allow-list entries', () => {
  it('reads host, host:port, IP addresses (IPv6 in brackets) and *.suffix, names without case', () => {
    expect(parseAllowEntry('PyPI.org')).toMatchObject({ ok: true, rule: { host: 'pypi.org', port: null } });
    expect(parseAllowEntry('127.0.0.1:8000')).toMatchObject({
      ok: true,
      rule: { host: '127.0.0.1', port: 8000, ip: true, wildcard: false },
    });
    expect(parseAllowEntry('[::1]:9000')).toMatchObject({
      ok: true,
      rule: { host: '::1', port: 9000, ip: true },
    });
    expect(parseAllowEntry('*.rcsb.org:443')).toMatchObject({
      ok: true,
      rule: { host: 'rcsb.org', port: 443, wildcard: true },
    });
  });

  it('refuses what is not an entry, saying what is wrong', () => {
    const error = (entry: string) => {
      const parsed = parseAllowEntry(entry);
      return parsed.ok ? null : parsed.error;
    };
    expect(error('pypi.org:0')).toMatch(/port "0", not a number from 1 to 65535/);
    expect(error('pypi.org:65536')).toMatch(/not a number from 1 to 65535/);
    expect(error('pypi.org:http')).toMatch(/port "http"/);
    expect(error('*')).toMatch(/is not a host name|DNS label|"\*"/);
    expect(error('*.com')).toMatch(/every name of a top-level domain/);
    expect(error('a.*.org')).toMatch(/not a leading "\*\."/);
    expect(error('*.10.0.0.1')).toMatch(/"\*\." before an IP address/);
    expect(error('http://pypi.org')).toMatch(/is a URL, not a host/);
    expect(error('pypi.org/simple')).toMatch(/has a path/);
    expect(error('under_score.org')).toMatch(/"under_score", which is not a DNS label/);
    expect(error(' pypi.org')).toMatch(/spaces/);
    expect(error('::1')).toMatch(/IPv6 address in brackets/);
    expect(error('[pypi.org]')).toMatch(/not an IPv6 address/);
    expect(error('999.1.1.1')).toMatch(/neither an IP address nor a host name/);
    for (const entry of ['pypi.org:0', '*.com'])
      expect(error(entry)).toMatch(/write host, host:port or \*\.suffix/);
  });
});

describe('the allow-list verdict', () => {
  const list = new EgressAllowList([
    'pypi.org',
    'data.example.com:8443',
    '*.rcsb.org',
    '127.0.0.1:5000',
    '[::1]:7000',
  ]);

  it('allows a listed name on 80 and 443 only when no port is given, and exactly the listed port otherwise', () => {
    expect(list.verdict('pypi.org', 443).allowed).toBe(true);
    expect(list.verdict('PYPI.ORG.', 80).allowed).toBe(true);
    expect(list.verdict('pypi.org', 22)).toEqual({
      allowed: false,
      reason: 'pypi.org:22: the task allows this host on port 80, 443 only',
    });
    expect(list.verdict('data.example.com', 8443).allowed).toBe(true);
    expect(list.verdict('data.example.com', 443).allowed).toBe(false);
  });

  it('matches *.suffix below the suffix only, never the suffix itself or a look-alike', () => {
    expect(list.verdict('files.rcsb.org', 443).allowed).toBe(true);
    expect(list.verdict('a.b.rcsb.org', 443).allowed).toBe(true);
    expect(list.verdict('rcsb.org', 443).allowed).toBe(false);
    expect(list.verdict('evilrcsb.org', 443).allowed).toBe(false);
    expect(list.verdict('rcsb.org.evil.com', 443).allowed).toBe(false);
  });

  it('matches IP addresses only against IP entries, in any spelling of the same address', () => {
    expect(list.verdict('127.0.0.1', 5000).allowed).toBe(true);
    expect(list.verdict('127.0.0.1', 5001)).toEqual({
      allowed: false,
      reason: '127.0.0.1:5001: the task allows this host on port 5000 only',
    });
    expect(list.verdict('[0:0:0:0:0:0:0:1]', 7000).allowed).toBe(true);
    expect(list.verdict('localhost', 5000)).toEqual({
      allowed: false,
      reason: "localhost:5000: not on the task's network allow-list",
    });
  });

  it('throws on an entry the manifest would have refused', () => {
    expect(() => new EgressAllowList(['*.com'])).toThrow(/network allow-list: "\*\.com"/);
  });

  it('gives every host and port only as ANY_PUBLIC_HOST, never as an entry a task could write', () => {
    const everyHost = new EgressAllowList(ANY_PUBLIC_HOST);
    expect(everyHost.rules).toEqual([]);
    expect(everyHost.verdict('files.pythonhosted.org', 443)).toEqual({ allowed: true, rule: null });
    expect(everyHost.verdict('203.0.113.7', 8080)).toEqual({ allowed: true, rule: null });
    for (const entry of ['*', '*:443', ANY_PUBLIC_HOST.replace(/-/g, '*')]) {
      expect(parseAllowEntry(entry).ok, entry).toBe(false);
    }
    expect(() => new EgressAllowList(['*'])).toThrow(/network allow-list: "\*"/);
    // The string itself, as an entry, is one host's name: no more than that host.
    expect(new EgressAllowList([ANY_PUBLIC_HOST]).verdict('pypi.org', 443).allowed).toBe(false);
  });
});
