import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

import { errorMessage } from '../errors.js';
import { destinationClass } from './destination-class.js';
import {
  EgressAllowList,
  normaliseHost,
  type EgressAllowance,
  type EgressVerdict,
} from './egress-allow-list.js';
import type { EgressExchange } from './egress-exchange.js';
import { PrivateDestinations } from './private-destinations.js';

/**
 * Where a request may go: the verdict on the name and port, then the address to connect to: the IP address as
 * listed or one the name resolves to, public or opened by the run configuration. Null with the exchange settled
 * (refused or failed) when it may not go anywhere.
 */
export type EgressDestination = (
  exchange: EgressExchange,
  host: string,
  port: number,
) => Promise<string | null>;

/** The destination check of an allow-list, the run's private destinations and a resolver. */
export function egressDestination(
  allow: EgressAllowance,
  privateEntries: readonly string[],
  lookup: (host: string) => Promise<string[]> = defaultLookup,
): EgressDestination {
  const allowList = new EgressAllowList(allow);
  const privateDestinations = new PrivateDestinations(privateEntries);
  return async (exchange, host, port) => {
    const verdict: EgressVerdict = allowList.verdict(host, port);
    if (!verdict.allowed) {
      exchange.reason = verdict.reason;
      exchange.status = 403;
      return null;
    }
    const name = normaliseHost(host);
    let addresses: string[] = [name];
    if (isIP(name) === 0) {
      try {
        addresses = await lookup(name);
      } catch (error) {
        exchange.verdict = 'allowed';
        exchange.reason = `cannot resolve ${name}: ${errorMessage(error)}`.slice(0, 500);
        exchange.status = 502;
        return null;
      }
    }
    const reachable = (address: string): boolean =>
      isIP(address) !== 0 &&
      (destinationClass(address).kind === 'public' || privateDestinations.allows(name, address, port));
    const address = addresses.find(reachable);
    if (address === undefined) {
      exchange.reason = unreachableReason(name, port, addresses).slice(0, 500);
      exchange.status = 403;
      return null;
    }
    exchange.verdict = 'allowed';
    return address;
  };
}

async function defaultLookup(host: string): Promise<string[]> {
  const results = await dnsLookup(host, { all: true, verbatim: true });
  return results.map((result) => result.address);
}

/** Why none of the addresses may be reached: the first one's class, or that there were none. */
function unreachableReason(name: string, port: number, addresses: readonly string[]): string {
  const first = addresses[0];
  if (first === undefined) return `${name}: resolves to no address`;
  const what = isIP(first) === 0 ? 'not an IP address' : destinationClass(first).why;
  const where = `${name.includes(':') ? `[${name}]` : name}:${port}`;
  const subject = first === name ? `${where} is ${what}` : `${where} resolves to ${first}, ${what}`;
  return `${subject}; only the run configuration opens such a destination (network.privateDestinations)`;
}
