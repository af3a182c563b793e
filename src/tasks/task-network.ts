import { z } from 'zod';

import { NetworkAllowEntry } from '../config/network-settings.js';
import { destinationClass } from '../proxy/destination-class.js';
import { ANY_PUBLIC_HOST, parseAllowEntry, type EgressAllowance } from '../proxy/egress-allow-list.js';

/** One entry of `environment.network.allow`: the configuration's schema of an allow-list entry. */
export { NetworkAllowEntry };

/** What an episode's agents may reach beyond the model: nothing (`false`), or the hosts of an allow-list. */
export const TaskNetwork = z.union([
  z.literal(false),
  z
    .object({
      allow: z.array(NetworkAllowEntry).min(1, 'list at least one host, or write network: false').max(256),
    })
    .strict(),
]);
export type TaskNetwork = z.infer<typeof TaskNetwork>;

/**
 * What an episode's agents may reach beyond the model: a task's network, or every public host (`{ anyPublicHost:
 * true }`), which only a run gives, never a task: a public benchmark's task that asks for the internet (`mass
 * benchmark --internet public`). A task.yaml's `environment.network` is a `TaskNetwork` and cannot say it.
 */
export const EpisodeNetwork = z.union([TaskNetwork, z.object({ anyPublicHost: z.literal(true) }).strict()]);
export type EpisodeNetwork = z.infer<typeof EpisodeNetwork>;

/** What the egress proxy lets through for a network that is not `false`. */
export function egressAllowance(network: Exclude<EpisodeNetwork, false>): EgressAllowance {
  return 'anyPublicHost' in network ? ANY_PUBLIC_HOST : network.allow;
}

/**
 * What `mass tasks validate` says of an allow-list beyond its syntax: an entry that is an IP address (in any spelling)
 * or a name for the machine, its network or a cloud metadata service (`localhost`, `*.internal`, `*.local`) is an
 * error. Such a destination is the run configuration's to open, never a task's: the manifest still loads, and the
 * egress proxy decides by the run configuration.
 */
export function networkAllowProblems(network: TaskNetwork): string[] {
  if (network === false) return [];
  return network.allow.flatMap((entry, index) => {
    const parsed = parseAllowEntry(entry);
    if (!parsed.ok) return [];
    const found = destinationClass(parsed.rule.host);
    if (found.kind === 'public' && found.address === null) return [];
    const field = `field "environment.network.allow[${index}]": "${entry}"`;
    return [
      found.kind === 'public'
        ? `${field} is a public IP address; a task's allow-list names hosts by name: write the host's name`
        : `${field} is ${found.why}; a task never opens such a destination, only the run configuration does (network.privateDestinations): remove it, or name a public host`,
    ];
  });
}
