import { isIP } from 'node:net';

import {
  canonicalIp,
  DEFAULT_ALLOWED_PORTS,
  normaliseHost,
  parseAllowEntry,
  type AllowRule,
} from '../allow-entry.js';

/** The syntax of an entry is `src/allow-entry.ts`'s, which the configuration and task.yaml validate with too. */
export * from '../allow-entry.js';

/**
 * Every public host, on every port: what a public benchmark's task that asks for the internet gets (`mass benchmark
 * --internet public`). It is no allow-list entry (`parseAllowEntry` refuses a bare `*`), so no task.yaml can name it;
 * only the run that starts the proxy gives it. Whether an address is public is still the proxy's check of every
 * address a name resolves to, and a non-public one is reached only where the run configuration opens it.
 */
export const ANY_PUBLIC_HOST = 'any-public-host';

/** What the egress proxy lets through: the hosts of an allow-list, or `ANY_PUBLIC_HOST`. */
export type EgressAllowance = readonly string[] | typeof ANY_PUBLIC_HOST;

/** Allowed: by the allow-list's rule that matched, or (rule null) because every public host is. */
export type EgressVerdict = { allowed: true; rule: AllowRule | null } | { allowed: false; reason: string };

/** Decides requests against a task's allow-list, by the host and port the client named. */
export class EgressAllowList {
  readonly rules: readonly AllowRule[];
  /** Every host and port passes here; the proxy's address check alone decides. */
  readonly anyPublicHost: boolean;

  constructor(allowance: EgressAllowance) {
    this.anyPublicHost = allowance === ANY_PUBLIC_HOST;
    this.rules = (allowance === ANY_PUBLIC_HOST ? [] : allowance).map((entry) => {
      const parsed = parseAllowEntry(entry);
      if (!parsed.ok) throw new Error(`network allow-list: ${parsed.error}`);
      return parsed.rule;
    });
  }

  verdict(host: string, port: number): EgressVerdict {
    if (this.anyPublicHost) return { allowed: true, rule: null };
    const name = normaliseHost(host);
    const ip = isIP(name) !== 0;
    const target = ip ? canonicalIp(name) : name;
    const hostMatches = this.rules.filter((rule) =>
      rule.ip !== ip ? false : rule.wildcard ? target.endsWith(`.${rule.host}`) : target === rule.host,
    );
    const rule = hostMatches.find((candidate) =>
      candidate.port === null ? DEFAULT_ALLOWED_PORTS.includes(port) : candidate.port === port,
    );
    if (rule) return { allowed: true, rule };
    const where = `${ip && target.includes(':') ? `[${target}]` : target}:${port}`;
    if (hostMatches.length > 0) {
      const ports = [
        ...new Set(
          hostMatches.flatMap((match) => (match.port === null ? DEFAULT_ALLOWED_PORTS : [match.port])),
        ),
      ];
      return {
        allowed: false,
        reason: `${where}: the task allows this host on port ${ports.join(', ')} only`,
      };
    }
    return { allowed: false, reason: `${where}: not on the task's network allow-list` };
  }
}
