import { isIP } from 'node:net';

import { canonicalIp, normaliseHost, parseAllowEntry, type AllowRule } from './egress-allow-list.js';

/**
 * The destinations that the run configuration, not the task, lets agents reach at a loopback, private, link-local or
 * otherwise non-public address (`network.privateDestinations`): a lab's database, a data server on the local
 * network. An entry is written as an allow-list entry is (`10.0.0.5:8000`, `db.lab.internal`, `*.lab.internal:5432`);
 * without a port it matches every port. It opens nothing by itself: the task's allow-list still decides whether the
 * host and port may be reached at all, and this decides whether the address it leads to may be a non-public one.
 */
export class PrivateDestinations {
  readonly rules: readonly AllowRule[];

  constructor(entries: readonly string[]) {
    this.rules = entries.map((entry) => {
      const parsed = parseAllowEntry(entry);
      if (!parsed.ok) throw new Error(`network.privateDestinations: ${parsed.error}`);
      return parsed.rule;
    });
  }

  /**
   * Whether the connection to `address` (the address checked and connected to), asked for as `host` (the name or
   * address the client named), may go to that non-public address on `port`: the name or the address is listed.
   */
  allows(host: string, address: string, port: number): boolean {
    const name = normaliseHost(host);
    const asked = isIP(name) === 0 ? name : canonicalIp(name);
    const connected = canonicalIp(normaliseHost(address));
    return this.rules.some((rule) => {
      if (rule.port !== null && rule.port !== port) return false;
      if (rule.ip) return rule.host === connected || rule.host === asked;
      return rule.wildcard ? asked.endsWith(`.${rule.host}`) : asked === rule.host;
    });
  }
}
