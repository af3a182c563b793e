import { isIP } from 'node:net';

/**
 * What kind of destination a host is, before anything resolves it: a public name or address, or one that leads to
 * the machine itself or its network (loopback, private, link-local, a cloud metadata service, or a reserved range).
 * An IP address counts in every spelling a URL parser or resolver accepts (`127.1`, `0x7f.0.0.1`, `2130706433`,
 * `[::ffff:127.0.0.1]`); an IPv4 address inside IPv6 (mapped, NAT64, 6to4) counts as that IPv4 address. Names count by
 * the names reserved for local use (`localhost`, `*.internal`, `*.local`, a name of one label…); a public name that
 * resolves to a private address is the resolver's matter (`isPrivateAddress` checks what it resolved to).
 */

export type DestinationKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'invalid';

export interface DestinationClass {
  kind: DestinationKind;
  /** The canonical address (IPv6 without brackets) when the host is an IP literal in any spelling; null for a name. */
  address: string | null;
  /** Why, in a few words, for messages: "a loopback address (127.0.0.0/8)", "a name for local use (*.internal)". */
  why: string;
}

interface Range {
  /** First address and prefix length, IPv4 as a 32-bit number. */
  base: number;
  bits: number;
  kind: Exclude<DestinationKind, 'public' | 'invalid'>;
  name: string;
}

const ipv4 = (text: string) => text.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
const range = (cidr: string, kind: Range['kind']): Range => {
  const [base, bits] = cidr.split('/') as [string, string];
  return { base: ipv4(base), bits: Number(bits), kind, name: cidr };
};

/** Most specific first: the metadata addresses inside link-local and shared space are named before their ranges. */
const IPV4_RANGES: readonly Range[] = [
  range('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, OpenStack, Oracle
  range('169.254.170.2/32', 'metadata'), // ECS task credentials
  range('100.100.100.200/32', 'metadata'), // Alibaba Cloud
  range('168.63.129.16/32', 'metadata'), // Azure's platform endpoint
  range('0.0.0.0/8', 'unspecified'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'private'), // shared address space (carrier-grade NAT)
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'reserved'),
  range('192.0.2.0/24', 'reserved'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'private'), // benchmarking networks
  range('198.51.100.0/24', 'reserved'),
  range('203.0.113.0/24', 'reserved'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'), // and the broadcast address
];

/** Names the DNS sets aside for the local machine or network, and the metadata services' own names. */
const LOOPBACK_NAMES = ['localhost'];
const METADATA_NAMES = ['metadata.google.internal', 'metadata', 'instance-data', 'metadata.tencentyun.com'];
const LOCAL_SUFFIXES = [
  'internal',
  'local',
  'localdomain',
  'home.arpa',
  'intranet',
  'private',
  'corp',
  'home',
  'lan',
];

/** How a DNS name, a bracketed or bare IPv6 address, or an IPv4 address in any spelling counts as a destination. */
export function destinationClass(host: string): DestinationClass {
  const trimmed = host.trim().toLowerCase();
  // What a URL parser would read as user info, a path or an escape is no host at all.
  if (trimmed === '' || /[\s/\\@?#%]/.test(trimmed)) return invalid(host);
  const bare = trimmed.replace(/^\[(.*)\]$/, '$1');
  const address = canonicalAddress(bare);
  if (address === undefined) return invalid(host);
  if (address !== null) return addressClass(address);
  return nameClass(bare.replace(/\.$/, ''));
}

/** A public name or address: what a task's allow-list may name. */
export function isPublicDestination(host: string): boolean {
  return destinationClass(host).kind === 'public';
}

/**
 * True for an address that no name on an allow-list may lead to (what a listed name resolved to): anything but a
 * public IPv4 or IPv6 address, and anything that is not an address at all.
 */
export function isPrivateAddress(address: string): boolean {
  if (isIP(address.replace(/^\[(.*)\]$/, '$1')) === 0) return true;
  return !isPublicDestination(address);
}

/** The canonical IP address, null for a DNS name, undefined for something neither (`1.2.3.999`). */
function canonicalAddress(bare: string): string | null | undefined {
  if (isIP(bare) === 4) return bare;
  let hostname: string;
  try {
    hostname = new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return undefined;
  }
  const unbracketed = hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(unbracketed) === 0 ? null : unbracketed;
}

function addressClass(address: string): DestinationClass {
  if (isIP(address) === 4) return ipv4Class(address, address);
  const groups = ipv6Groups(address);
  const embedded = embeddedIpv4(groups);
  if (embedded !== null) {
    const inner = ipv4Class(embedded, address);
    return inner.kind === 'public' ? inner : { ...inner, why: `${inner.why}, inside IPv6` };
  }
  const first = groups[0]!;
  const found = (kind: Range['kind'], why: string): DestinationClass => ({ kind, address, why });
  if (groups.every((group) => group === 0)) return found('unspecified', 'the unspecified address (::)');
  if (groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1)
    return found('loopback', 'the loopback address (::1)');
  if (address === 'fd00:ec2::254') return found('metadata', 'a cloud metadata address (fd00:ec2::254)');
  if ((first & 0xfe00) === 0xfc00) return found('private', 'a unique local address (fc00::/7)');
  if ((first & 0xffc0) === 0xfe80) return found('link-local', 'a link-local address (fe80::/10)');
  if ((first & 0xffc0) === 0xfec0) return found('private', 'a site-local address (fec0::/10)');
  if ((first & 0xff00) === 0xff00) return found('multicast', 'a multicast address (ff00::/8)');
  if (first === 0) return found('reserved', 'a reserved address (::/16)');
  if (first === 0x0100 && groups.slice(1, 4).every((group) => group === 0))
    return found('reserved', 'a discard address (100::/64)');
  if (first === 0x2001 && groups[1] === 0x0db8)
    return found('reserved', 'a documentation address (2001:db8::/32)');
  return { kind: 'public', address, why: 'a public IP address' };
}

function ipv4Class(text: string, address: string): DestinationClass {
  const value = ipv4(text);
  const match = IPV4_RANGES.find(
    (candidate) =>
      Math.floor(value / 2 ** (32 - candidate.bits)) ===
      Math.floor(candidate.base / 2 ** (32 - candidate.bits)),
  );
  if (!match) return { kind: 'public', address, why: 'a public IP address' };
  const words: Record<Range['kind'], string> = {
    metadata: 'a cloud metadata address',
    unspecified: 'an unspecified address',
    private: 'a private address',
    loopback: 'a loopback address',
    'link-local': 'a link-local address',
    reserved: 'a reserved address',
    multicast: 'a multicast address',
  };
  return { kind: match.kind, address, why: `${words[match.kind]} (${match.name})` };
}

/** The eight 16-bit groups of a canonical IPv6 address (as the URL parser writes it: `::` once, no dotted quad). */
function ipv6Groups(address: string): number[] {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, null];
  const parse = (part: string | null | undefined) =>
    part ? part.split(':').map((group) => parseInt(group, 16)) : [];
  const front = parse(head);
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** The IPv4 address an IPv6 address carries: mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96), 6to4 (2002::/16). */
function embeddedIpv4(groups: number[]): string | null {
  const quad = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && groups[5] === 0xffff) return quad(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return quad(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return quad(groups[1]!, groups[2]!);
  return null;
}

function nameClass(name: string): DestinationClass {
  const under = (suffix: string) => name === suffix || name.endsWith(`.${suffix}`);
  if (LOOPBACK_NAMES.some(under))
    return { kind: 'loopback', address: null, why: 'a loopback name (localhost)' };
  const metadata = METADATA_NAMES.find((candidate) => name === candidate);
  if (metadata) return { kind: 'metadata', address: null, why: `a cloud metadata name (${metadata})` };
  const suffix = LOCAL_SUFFIXES.find(under);
  if (suffix) return { kind: 'private', address: null, why: `a name for local use (*.${suffix})` };
  if (!name.includes('.'))
    return {
      kind: 'private',
      address: null,
      why: 'a name of one label, which only a local resolver answers',
    };
  return { kind: 'public', address: null, why: 'a public name' };
}

function invalid(host: string): DestinationClass {
  return { kind: 'invalid', address: null, why: `"${host}" is not a host name or IP address` };
}
