import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { packageDirectories } from '../../src/harness/package-directories.js';
import type { SandboxResult } from '../../src/episode/sandbox.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { capture, openSandbox, uniqueMarker, type SandboxFixture } from './sandbox-helpers.js';

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const require = createRequire(import.meta.url);
const harnessDirectory = dirname(require.resolve('@qwen-code/qwen-code/package.json'));
/** A withheld grader, in the package's git store. */
const GRADER = 'suites/demo/demo-potency/oracle/grade.py';
const isRoot = process.getuid?.() === 0;
/** System paths the configuration may hide (`sandboxHide`): a folder of /usr and a file of /etc, both non-empty here. */
const HIDDEN_SYSTEM_FOLDER = '/usr/share/doc';
const HIDDEN_SYSTEM_FILE = '/etc/debian_version';
const hasHiddenSystemPaths = existsSync(HIDDEN_SYSTEM_FOLDER) && existsSync(HIDDEN_SYSTEM_FILE);
const inGitCheckout = existsSync(join(repositoryRoot, '.git'));

/**
 * Each probe prints `name=<exit status>` (0: it worked); some print what they read first. Run as agent code, in a
 * sandbox opened the way an episode opens one (the harness's package folders and this Node shown, the suites and
 * the tests hidden).
 */
const PROBES = `
probe() { name="$1"; shift; "$@" >/dev/null 2>&1; echo "$name=$?"; }
probe git-grader git --git-dir="$REPOSITORY/.git" show "HEAD:$GRADER"
probe git-store test -e "$REPOSITORY/.git"
probe suites test -e "$REPOSITORY/suites"
probe harness test -f "$HARNESS/package.json"
echo "repository-listing=$(ls -A "$REPOSITORY" | tr '\\n' ' ')"
probe shadow cat /etc/shadow
probe gshadow cat /etc/gshadow
probe root-only cat "$READABLE/root-only.txt"
probe world-readable cat "$READABLE/world-readable.txt"
probe other-run-config cat "$OTHER_RUN/config.yaml"
probe other-run-workspace ls "$OTHER_RUN/episodes/e1/workspace"
echo "uid=$(id -u) user=$(id -un)"
echo "hidden-system-folder=$(ls -A "$HIDDEN_FOLDER" 2>&1 | wc -l) hidden-system-file=$(wc -c <"$HIDDEN_FILE")"
echo "passwd-lines=$(wc -l </etc/passwd)"
`;

describe('sandbox: an allow-list of the host, and a user of its own', () => {
  const marker = uniqueMarker();
  // A directory the sandbox shows (as it shows the harness): a root-only file there must stay unreadable.
  const readableDirectory = join(repositoryRoot, 'node_modules', '.cache', `${marker}-readable`);
  // Another run, readable by everyone on the host: only the allow-list keeps it out.
  const otherRun = join(repositoryRoot, 'node_modules', '.cache', `${marker}-other-run`);
  let fixture: SandboxFixture;
  let result: SandboxResult;
  let probes: Record<string, string>;
  let errors: string;

  beforeAll(async () => {
    mkdirSync(readableDirectory, { recursive: true });
    chmodSync(readableDirectory, 0o755);
    writeFileSync(join(readableDirectory, 'root-only.txt'), 'sk-root-only\n');
    chmodSync(join(readableDirectory, 'root-only.txt'), 0o600);
    writeFileSync(join(readableDirectory, 'world-readable.txt'), 'shown\n');
    chmodSync(join(readableDirectory, 'world-readable.txt'), 0o644);
    mkdirSync(join(otherRun, 'episodes', 'e1', 'workspace'), { recursive: true });
    writeFileSync(join(otherRun, 'config.yaml'), 'name: other\n');
    chmodSync(join(otherRun, 'config.yaml'), 0o644);
    for (const directory of [otherRun, join(otherRun, 'episodes'), join(otherRun, 'episodes', 'e1')]) {
      chmodSync(directory, 0o755);
    }
    fixture = await openSandbox('bubblewrap', {
      readableDirectories: [
        ...packageDirectories(harnessDirectory),
        dirname(process.execPath),
        readableDirectory,
      ],
      hiddenDirectories: [
        ...['suites', 'test'].map((folder) => join(repositoryRoot, folder)),
        HIDDEN_SYSTEM_FOLDER,
        HIDDEN_SYSTEM_FILE,
      ],
    });
    const output = capture();
    const stderr = capture();
    result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', PROBES],
      env: {
        REPOSITORY: repositoryRoot,
        GRADER,
        HARNESS: harnessDirectory,
        READABLE: readableDirectory,
        OTHER_RUN: otherRun,
        HIDDEN_FOLDER: HIDDEN_SYSTEM_FOLDER,
        HIDDEN_FILE: HIDDEN_SYSTEM_FILE,
      },
      stdout: output.sink,
      stderr: stderr.sink,
      limits: { wallClockSeconds: 30 },
    });
    errors = stderr.text();
    probes = Object.fromEntries(
      output
        .text()
        .trim()
        .split('\n')
        .flatMap((line) => line.split(' '))
        .map((pair) => pair.split('=') as [string, string]),
    );
  });

  afterAll(async () => {
    await fixture.close();
    rmSync(readableDirectory, { recursive: true, force: true });
    rmSync(otherRun, { recursive: true, force: true });
  });

  it.runIf(inGitCheckout)('cannot read the withheld graders through the package’s git store', () => {
    // The same command works on the host: only the sandbox stops it.
    execFileSync('git', ['--git-dir', join(repositoryRoot, '.git'), 'show', `HEAD:${GRADER}`], {
      stdio: 'ignore',
    });
    expect(result.exitCode, errors).toBe(0);
    expect(probes['git-grader']).not.toBe('0');
    expect(probes['git-store']).toBe('1');
  });

  it('sees the harness but not the checkout that holds it', () => {
    expect(probes.harness).toBe('0');
    expect(probes.suites).toBe('1');
    // The checkout's path holds only the mount points of what is shown.
    expect(probes['repository-listing']).toBe('node_modules');
  });

  it('has no /etc/shadow, and runs as an ordinary user named agent', () => {
    expect(probes.shadow).not.toBe('0');
    expect(probes.gshadow).not.toBe('0');
    expect(probes.uid).toBe('1000');
    expect(probes.user).toBe('agent');
    expect(Number(probes['passwd-lines'])).toBe(3);
  });

  it.runIf(isRoot)('cannot read a root-only file among what it is shown', () => {
    expect(probes['world-readable']).toBe('0');
    expect(probes['root-only']).not.toBe('0');
  });

  it.runIf(hasHiddenSystemPaths)('sees hidden system paths as an empty folder and an empty file', () => {
    expect(probes['hidden-system-folder']).toBe('0');
    expect(probes['hidden-system-file']).toBe('0');
  });

  it('sees no other run, even one readable by everyone', () => {
    expect(probes['other-run-config']).not.toBe('0');
    expect(probes['other-run-workspace']).not.toBe('0');
  });
});

/** Agent code leaving files the host must read and own afterwards: private modes, a link to a host secret, a set-user-ID binary. */
const LEAVE_FILES = `
set -e
umask 077
echo private > private.txt
mkdir -p closed/inner && echo nested > closed/inner/file.txt && chmod 000 closed
ln -s /etc/shadow shadow-link
cp /bin/true set-uid && chmod 4755 set-uid
ln private.txt hard-link.txt
echo "$HOME" > "$HOME/home-file"
stat -c '%u' private.txt
`;

describe.runIf(isRoot)('sandbox: the host owns what the agents wrote once the sandbox closes', () => {
  let fixture: SandboxFixture;
  let shadow: { uid: number; gid: number; mode: number };
  let ownerDuringRun: number;
  let ownerInside: string;

  beforeAll(async () => {
    const { lstatSync } = await import('node:fs');
    const before = lstatSync('/etc/shadow');
    shadow = { uid: before.uid, gid: before.gid, mode: before.mode };
    fixture = await openSandbox('bubblewrap');
    const output = capture();
    const result = await fixture.sandbox.run({
      command: '/bin/sh',
      args: ['-c', LEAVE_FILES],
      stdout: output.sink,
      limits: { wallClockSeconds: 30 },
    });
    expect(result.exitCode).toBe(0);
    ownerInside = output.text().trim();
    ownerDuringRun = lstatSync(join(fixture.workspace, 'private.txt')).uid;
    await fixture.sandbox.close();
  });

  afterAll(async () => {
    await fixture.close();
  });

  it('ran as a host uid of its own, shown inside as 1000', () => {
    expect(ownerInside).toBe('1000');
    expect(ownerDuringRun).not.toBe(0);
    expect(ownerDuringRun).toBeGreaterThan(2 ** 30);
  });

  it('gives every file, folder and link back to the caller, readable, without set-user-ID bits', async () => {
    const { lstatSync, readFileSync } = await import('node:fs');
    const workspace = fixture.workspace;
    for (const path of [
      'private.txt',
      'closed',
      'closed/inner',
      'closed/inner/file.txt',
      'shadow-link',
      'set-uid',
      'hard-link.txt',
    ]) {
      const stat = lstatSync(join(workspace, path));
      expect([stat.uid, stat.gid], path).toEqual([process.getuid!(), process.getgid!()]);
    }
    expect(lstatSync(join(fixture.sandbox.homeDirectory, 'home-file')).uid).toBe(process.getuid!());
    expect(readFileSync(join(workspace, 'closed', 'inner', 'file.txt'), 'utf8')).toBe('nested\n');
    expect(lstatSync(join(workspace, 'set-uid')).mode & 0o6000).toBe(0);
    // The link was changed itself, never followed to the host's file.
    const after = lstatSync('/etc/shadow');
    expect({ uid: after.uid, gid: after.gid, mode: after.mode }).toEqual(shadow);
  });
});

describe('sandbox: a package and a workspace under a folder only root can enter (a checkout under /root)', () => {
  it('reads the package and writes the workspace', async () => {
    const outer = temporaryDirectory('mass-private-');
    try {
      chmodSync(outer.path, 0o700);
      const packageDirectory = join(outer.path, 'checkout', 'node_modules', 'some-harness');
      mkdirSync(packageDirectory, { recursive: true });
      writeFileSync(join(packageDirectory, 'index.js'), 'console.log("harness ran")\n');
      const workspace = join(outer.path, 'checkout', 'runs', 'e1', 'workspace');
      mkdirSync(workspace, { recursive: true });
      const fixture = await openSandbox('bubblewrap', {
        workspace,
        stateDirectory: join(outer.path, 'checkout', 'runs', 'e1', 'sandbox'),
        readableDirectories: [packageDirectory, dirname(process.execPath)],
      });
      try {
        const output = capture();
        const errors = capture();
        const result = await fixture.sandbox.run({
          command: '/bin/sh',
          args: [
            '-c',
            `"${process.execPath}" "${packageDirectory}/index.js" && echo written > result.txt && cat result.txt`,
          ],
          stdout: output.sink,
          stderr: errors.sink,
          limits: { wallClockSeconds: 30 },
        });
        expect(result.exitCode, errors.text()).toBe(0);
        expect(output.text()).toBe('harness ran\nwritten\n');
      } finally {
        await fixture.close();
      }
    } finally {
      outer.remove();
    }
  });
});

/** The research stack agents use: each library does real work, and matplotlib saves a PNG. */
const RESEARCH_PYTHON = `
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy, pandas, scipy.optimize, sklearn.linear_model
x = numpy.linspace(0, 1, 50)
frame = pandas.DataFrame({'x': x, 'y': 3 * x + 1})
fit = sklearn.linear_model.LinearRegression().fit(frame[['x']], frame['y'])
root = scipy.optimize.brentq(lambda value: value ** 2 - 2, 0, 2)
plt.plot(frame['x'], frame['y'])
plt.savefig('plot.png')
print(round(float(fit.coef_[0]), 3), round(root, 3))
`;

describe('sandbox: the research stack works inside', () => {
  it('runs numpy, pandas, scipy and scikit-learn, and matplotlib saves a PNG', async () => {
    const fixture = await openSandbox('bubblewrap');
    try {
      const output = capture();
      const errors = capture();
      const result = await fixture.sandbox.run({
        command: 'python3',
        args: ['-c', RESEARCH_PYTHON],
        stdout: output.sink,
        stderr: errors.sink,
        limits: { wallClockSeconds: 120 },
      });
      expect(result.exitCode, errors.text()).toBe(0);
      expect(output.text()).toBe('3.0 1.414\n');
      const { readFileSync } = await import('node:fs');
      const png = readFileSync(join(fixture.workspace, 'plot.png'));
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    } finally {
      await fixture.close();
    }
  });
});
