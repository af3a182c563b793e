/**
 * The hosts an official task names, for its network allow-list: the host of every URL in its text, every bare domain
 * it mentions (`investing.com`), the hosts behind the data services it names without a URL (FRED, Yahoo Finance,
 * Stooq, the Protein Data Bank), and the Python package index when it asks for packages to be installed. The result
 * is a starting point the importer prints and writes into task.yaml, for the user to review.
 *
 * Only public names are allowed. An IP address in any spelling (`http://127.0.0.1:6379/`, `10.0.0.5:8000`, `[::1]`,
 * `2130706433`) and a name for the machine or its network (`localhost`, `metadata.google.internal`, `*.local`) is left
 * out and said with the reason: a task's text never opens the host's own services, its network or a cloud metadata
 * service to agents.
 */

import { destinationClass } from '../../proxy/destination-class.js';
import { parseAllowEntry } from '../../proxy/egress-allow-list.js';

export interface NamedHosts {
  /** Allow-list entries (`host` or `host:port`), sorted, each once. */
  allow: string[];
  /** What the text names that the allow-list leaves out, sorted by entry, each once. */
  leftOut: Array<{ entry: string; why: string }>;
}

/** Data services the official tasks name by name, and the hosts their usual Python clients reach. */
const NAMED_SERVICES: ReadonlyArray<{ name: RegExp; hosts: string[] }> = [
  { name: /\bFRED\b/, hosts: ['fred.stlouisfed.org', 'api.stlouisfed.org'] },
  {
    name: /\bYahoo Finance\b|\byfinance\b/i,
    hosts: ['finance.yahoo.com', 'query1.finance.yahoo.com', 'query2.finance.yahoo.com', 'fc.yahoo.com'],
  },
  { name: /\bStooq\b/i, hosts: ['stooq.com'] },
  { name: /\bNasdaq Data Link\b|\bQuandl\b/i, hosts: ['data.nasdaq.com'] },
  { name: /\bProtein Data Bank\b|\bRCSB\b|\bPDB\b/, hosts: ['files.rcsb.org', 'data.rcsb.org'] },
  { name: /\bUniProt\b/i, hosts: ['rest.uniprot.org'] },
];

/** `uv add`, `pip install`, a requirements file: the agents install packages. */
const INSTALLS_PACKAGES = /\buv (?:add|run|pip)\b|\bpip install\b|\brequirements\.txt\b|\buvx\b/;
const PACKAGE_INDEX = ['pypi.org', 'files.pythonhosted.org'];

/** Any host a URL names: a bracketed IPv6 address, or a name or IPv4 address in any spelling. */
const URL_HOST = /\bhttps?:\/\/(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(\d{1,5}))?/gi;
/** An IPv4 address, with a port or without, outside a URL: `10.0.0.5:8000`. */
const BARE_IPV4 = /(?<![\w.:-])(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?(?![\w-]|\.\d)/g;
/** `localhost` and the names under it, and names for local use: said when left out, never allowed. */
const LOCAL_NAME =
  /(?<![\w@./-])((?:[a-z0-9-]+\.)*localhost|(?:[a-z0-9-]+\.)+(?:internal|local))(?::(\d{1,5}))?(?![\w-]|\.[a-z])/gi;
const BARE_DOMAIN =
  /(?<![\w@./-])((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:com|org|net|gov|edu|io|ai|co|uk|de|fr|jp|int))(?![\w-]|\.[a-z])/gi;

export function namedHosts(text: string): NamedHosts {
  // The official files hold some line breaks as the two characters `\n`; they separate words all the same.
  const plain = text.replaceAll('\\n', '\n');
  const allow = new Set<string>();
  const leftOut = new Map<string, string>();
  const add = (hostText: string, port: string | undefined, inUrl: boolean) => {
    const host = hostText.toLowerCase();
    const entry = port && !['80', '443'].includes(port) ? `${host}:${port}` : host;
    const found = destinationClass(host);
    if (found.kind === 'public' && found.address !== null) {
      leftOut.set(entry, 'a public IP address: an allow-list names hosts, not addresses');
    } else if (found.kind === 'public') {
      if (parseAllowEntry(entry).ok) allow.add(entry);
      else leftOut.set(entry, 'not a host name an allow-list can hold');
    } else if (found.kind !== 'invalid' || inUrl) leftOut.set(entry, found.why);
  };
  for (const match of plain.matchAll(URL_HOST)) add(match[1]!, match[2], true);
  const withoutUrls = plain.replace(/\bhttps?:\/\/\S+/gi, ' ');
  for (const pattern of [BARE_IPV4, LOCAL_NAME, BARE_DOMAIN]) {
    for (const match of withoutUrls.matchAll(pattern))
      add(match[1]!, pattern === BARE_DOMAIN ? undefined : match[2], false);
  }
  for (const service of NAMED_SERVICES) {
    if (service.name.test(plain)) for (const host of service.hosts) allow.add(host);
  }
  if (INSTALLS_PACKAGES.test(plain)) for (const host of PACKAGE_INDEX) allow.add(host);
  return {
    allow: [...allow].sort(),
    leftOut: [...leftOut].sort(([a], [b]) => a.localeCompare(b)).map(([entry, why]) => ({ entry, why })),
  };
}
