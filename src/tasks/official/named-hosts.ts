/**
 * The hosts an official task names, for its network allow-list: the host of every URL in its text, every bare domain
 * it mentions (`investing.com`), the hosts behind the data services it names without a URL (FRED, Yahoo Finance,
 * Stooq, the Protein Data Bank), and the Python package index when it asks for packages to be installed. The result
 * is a starting point the importer prints and writes into task.yaml, for the user to review.
 */

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

const URL_HOST =
  /\bhttps?:\/\/([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+)(?::(\d{1,5}))?/gi;
const BARE_DOMAIN =
  /(?<![\w@./-])((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:com|org|net|gov|edu|io|ai|co|uk|de|fr|jp|int))(?![\w-]|\.[a-z])/gi;

/** Allow-list entries (`host` or `host:port`), sorted, each once. */
export function namedHosts(text: string): string[] {
  // The official files hold some line breaks as the two characters `\n`; they separate words all the same.
  const plain = text.replaceAll('\\n', '\n');
  const hosts = new Set<string>();
  for (const match of plain.matchAll(URL_HOST)) {
    const host = match[1]!.toLowerCase();
    const port = match[2];
    hosts.add(port && !['80', '443'].includes(port) ? `${host}:${port}` : host);
  }
  const withoutUrls = plain.replace(/\bhttps?:\/\/\S+/gi, ' ');
  for (const match of withoutUrls.matchAll(BARE_DOMAIN)) hosts.add(match[1]!.toLowerCase());
  for (const service of NAMED_SERVICES) {
    if (service.name.test(plain)) for (const host of service.hosts) hosts.add(host);
  }
  if (INSTALLS_PACKAGES.test(plain)) for (const host of PACKAGE_INDEX) hosts.add(host);
  return [...hosts].sort();
}
