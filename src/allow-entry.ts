import { isIP } from 'node:net';

/**
 * A task's network allow-list (`environment.network.allow` in task.yaml), as the egress proxy applies it. An entry is
 * `host`, `host:port`, `*.suffix` or `*.suffix:port`, where host is a DNS name or an IP address (IPv6 in brackets,
 * `[::1]:8080`). Without a port an entry allows 80 and 443 only (plain HTTP and HTTPS); with one, exactly that port.
 * `*.suffix` allows every name below suffix (`*.rcsb.org`: `files.rcsb.org`, `a.b.rcsb.org`), not suffix itself.
 * Names are compared without case and without a trailing dot.
 */

/** The ports an entry without one allows. */
export const DEFAULT_ALLOWED_PORTS: readonly number[] = [80, 443];

export interface AllowRule {
  /** The entry as written. */
  entry: string;
  /** Lowercase, no trailing dot; for `*.suffix` the suffix; an IPv6 address without brackets. */
  host: string;
  /** `*.suffix`: any name strictly below `host`. */
  wildcard: boolean;
  /** An IP address rather than a name. */
  ip: boolean;
  /** Null: 80 and 443. */
  port: number | null;
}

export type ParsedAllowEntry = { ok: true; rule: AllowRule } | { ok: false; error: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** One allow-list entry, or what is wrong with it (one line, for task.yaml's validation). */
export function parseAllowEntry(entry: string): ParsedAllowEntry {
  const fail = (why: string): ParsedAllowEntry => ({
    ok: false,
    error: `"${entry}" ${why}; write host, host:port or *.suffix (e.g. pypi.org, 127.0.0.1:8000, *.rcsb.org)`,
  });
  if (entry.trim() !== entry || entry === '') return fail('is empty or has spaces around it');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) return fail('is a URL, not a host');
  if (/[/?#@]/.test(entry))
    return fail('has a path, query or user name; only the host (and port) are listed');
  let hostText = entry;
  let portText: string | null = null;
  if (entry.startsWith('[')) {
    const match = /^\[([^\]]+)\](?::([^:]*))?$/.exec(entry);
    if (!match) return fail('is not a bracketed IPv6 address');
    hostText = match[1]!;
    portText = match[2] ?? null;
    if (isIP(hostText) !== 6) return fail('has brackets around something that is not an IPv6 address');
  } else if ((entry.match(/:/g) ?? []).length === 1) {
    [hostText, portText] = entry.split(':') as [string, string];
  } else if (entry.includes(':')) {
    return fail('has more than one ":" (write an IPv6 address in brackets: [::1]:8080)');
  }
  let port: number | null = null;
  if (portText !== null) {
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      return fail(`has port "${portText}", not a number from 1 to 65535`);
    }
    port = Number(portText);
  }
  const wildcard = hostText.startsWith('*.');
  const name = (wildcard ? hostText.slice(2) : hostText).toLowerCase().replace(/\.$/, '');
  if (hostText.includes('*') && !wildcard) return fail('has a "*" that is not a leading "*."');
  const ipVersion = isIP(name);
  if (ipVersion !== 0) {
    if (wildcard) return fail('puts "*." before an IP address');
    return { ok: true, rule: { entry, host: canonicalIp(name), wildcard: false, ip: true, port } };
  }
  if (wildcard && !name.includes('.')) return fail('allows every name of a top-level domain');
  if (name.length === 0 || name.length > 253) return fail('is not a host name');
  for (const label of name.split('.')) {
    if (!LABEL.test(label)) return fail(`has "${label}", which is not a DNS label (letters, digits, "-")`);
  }
  if (/^[0-9.]+$/.test(name)) return fail('is neither an IP address nor a host name');
  return { ok: true, rule: { entry, host: name, wildcard, ip: false, port } };
}

/** Lowercase, without brackets or a trailing dot. */
export function normaliseHost(host: string): string {
  return host
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.$/, '');
}

/** One spelling per address (`::FFFF:127.0.0.1` and `::ffff:7f00:1` alike), so that literal entries compare. */
export function canonicalIp(address: string): string {
  if (isIP(address) !== 6) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}
