import { chmodSync, lstatSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { SANDBOX_UID } from '../harness/sandbox-uid.js';

/**
 * What of the host's own system a bubblewrap sandbox shows, read-only: its programs and libraries, the part of /etc
 * that they read, and the CPU topology. Nothing else of the host is visible (an allow-list: a deny-list of the host's
 * root left the package's git store readable, and through it the withheld graders). The sandbox adds its own /proc,
 * /dev and /tmp, and the folders each sandbox is given (workspace, home, the harness).
 */
export type SystemEntry = { path: string; kind: 'bind' } | { path: string; kind: 'symlink'; target: string };

/** The programs and libraries: /usr, and /bin, /sbin and /lib* as the symbolic links (merged /usr) or folders they are. */
const ROOT_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What Debian's Python 3 (numpy, pandas, matplotlib, scipy, scikit-learn), Node, sh, coreutils, git and the dynamic
 * loader read of /etc. Left out on purpose: shadow and gshadow, the host's passwd and group (the sandbox writes its
 * own), ssl/private, pip.conf, npmrc and gitconfig (package indexes and credential helpers can carry secrets),
 * resolv.conf (there is no network), machine-id and hostname (they name the host).
 */
const ETC_PATHS = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'ca-certificates.conf',
  'debian_version',
  'fonts',
  'gai.conf',
  'host.conf',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'ld.so.preload',
  'localtime',
  'lsb-release',
  'magic',
  'magic.mime',
  'matplotlibrc',
  'mime.types',
  'mtab',
  'networks',
  'nsswitch.conf',
  'os-release',
  'perl',
  'protocols',
  'rpc',
  'services',
  'shells',
  'ssl/certs',
  'ssl/openssl.cnf',
  'terminfo',
  'timezone',
].map((name) => `/etc/${name}`);

/** Debian's Python keeps its sitecustomize in /etc/python3.N (linked from /usr/lib/python3.N). */
const ETC_PATTERNS = [/^python3(\.\d+)?$/];

/**
 * glibc's and OpenBLAS's processor count (sysconf), lscpu and PyTorch read the CPU topology here; the rest of /sys
 * (devices, firmware, kernel settings) nothing inside needs.
 */
const SYS_PATHS = ['/sys/devices/system/cpu'];

/** The host's system entries that exist, read when a sandbox opens. */
export function hostSystemEntries(): SystemEntry[] {
  let etcNames: string[] = [];
  try {
    etcNames = readdirSync('/etc');
  } catch {
    // No /etc: nothing of it to show.
  }
  const matching = etcNames
    .filter((name) => ETC_PATTERNS.some((pattern) => pattern.test(name)))
    .map((name) => `/etc/${name}`);
  return [...ROOT_PATHS, ...ETC_PATHS, ...matching, ...SYS_PATHS].flatMap((path): SystemEntry[] => {
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return [{ path, kind: 'symlink', target: readlinkSync(path) }];
      if (stat.isDirectory() || stat.isFile()) return [{ path, kind: 'bind' }];
    } catch {
      // Not on this host.
    }
    return [];
  });
}

export const SANDBOX_USER_NAME = 'agent';
/** The sandbox's host name (its own UTS namespace): the host's would name the machine in what agents write. */
export const SANDBOX_HOSTNAME = 'sandbox';

/**
 * The sandbox's own /etc/passwd, group and hosts: the agents' user must have a name (Node's `os.userInfo()`, Python's
 * `getpass.getuser()` and git fail without one) and its host name must resolve, while the host's files list the
 * host's users and names. Files of uids that are not mapped into the sandbox show as `nobody`.
 */
export function systemFiles(home: string): Array<{ name: 'passwd' | 'group' | 'hosts'; text: string }> {
  return [
    {
      name: 'passwd',
      text:
        'root:x:0:0:root:/root:/usr/sbin/nologin\n' +
        `${SANDBOX_USER_NAME}:x:${SANDBOX_UID}:${SANDBOX_UID}:${SANDBOX_USER_NAME}:${home}:/bin/sh\n` +
        'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
    },
    {
      name: 'group',
      text: `root:x:0:\n${SANDBOX_USER_NAME}:x:${SANDBOX_UID}:\nnogroup:x:65534:\n`,
    },
    {
      name: 'hosts',
      text: `127.0.0.1\tlocalhost\n127.0.1.1\t${SANDBOX_HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n`,
    },
  ];
}

/** Writes `systemFiles` into `directory`, readable by every uid whatever the umask; returns inside → host paths. */
export function writeSystemFiles(directory: string, home: string): Array<{ inside: string; host: string }> {
  return systemFiles(home).map(({ name, text }) => {
    const host = join(directory, name);
    writeFileSync(host, text);
    chmodSync(host, 0o644);
    return { inside: `/etc/${name}`, host };
  });
}
