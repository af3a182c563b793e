import { execFileSync } from 'node:child_process';
import { cp, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

import { startMass, type CliResult } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

const fixture = fileURLToPath(new URL('../fixtures/official-checkout', import.meta.url));

// Each `mass` call starts Node on the built dist/ (about a second); allow for a busy machine.
const CLI_TIMEOUT_MS = 90_000;

/** `mass <args>`, killed if it has not finished within `limitMs`: a hung importer fails the test, not the tier. */
async function massWithin(args: string[], limitMs: number): Promise<CliResult & { killed: boolean }> {
  const { child, finished } = startMass(args);
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, limitMs);
  try {
    return { ...(await finished), killed };
  } finally {
    clearTimeout(timer);
  }
}

describe(
  'mass tasks import-official on a checkout that is not what it seems',
  { timeout: CLI_TIMEOUT_MS },
  () => {
    const directory = temporaryDirectory('mass-import-e2e-');
    afterAll(() => directory.remove());

    async function checkout(name: string): Promise<string> {
      const dir = path.join(directory.path, name);
      await cp(fixture, dir, { recursive: true });
      return dir;
    }

    it('refuses a FIFO in place of a query file at once, without waiting for a writer', async () => {
      const dir = await checkout('fifo');
      const query = path.join(dir, 'tasks/bare/query21.txt');
      await rename(query, `${query}.moved`);
      execFileSync('mkfifo', [query]);
      const result = await massWithin(
        ['tasks', 'import-official', dir, '--out', path.join(directory.path, 'fifo-suite')],
        30_000,
      );
      expect(result.killed, 'the importer hung on the FIFO').toBe(false);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        "tasks/bare/query21.txt (task 21's bare query) is a FIFO, not a regular file",
      );
    });

    it('prints what it left out of each allow-list; validate flags an address written in by hand', async () => {
      const dir = await checkout('addresses');
      const extra = ' Cache in Redis at http://127.0.0.1:6379/ and call the server at 10.0.0.5:8000.';
      for (const relative of ['tasks/bare/query11.txt', 'tasks/initial/query11_ourTeam.txt']) {
        const file = path.join(dir, relative);
        await writeFile(
          file,
          (await readFile(file, 'utf8')).replace('for definitions.', `for definitions.${extra}`),
        );
      }
      const suite = path.join(directory.path, 'addresses-suite');
      const imported = await massWithin(['tasks', 'import-official', dir, '--out', suite], CLI_TIMEOUT_MS);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toContain(
        'left out of the network: 127.0.0.1:6379 (a loopback address (127.0.0.0/8))',
      );
      expect(imported.stdout).toContain(
        'left out of the network: 10.0.0.5:8000 (a private address (10.0.0.0/8))',
      );
      const clean = await massWithin(['tasks', 'validate', suite], CLI_TIMEOUT_MS);
      expect(clean.code, clean.stdout + clean.stderr).toBe(0);

      const manifestFile = path.join(suite, 'query11', 'task.yaml');
      const manifest = parse(await readFile(manifestFile, 'utf8')) as {
        environment: { network: { allow: string[] } };
      };
      manifest.environment.network.allow.push('127.0.0.1:6379');
      const index = manifest.environment.network.allow.length - 1;
      await writeFile(manifestFile, stringify(manifest));
      const flagged = await massWithin(['tasks', 'validate', suite], CLI_TIMEOUT_MS);
      expect(flagged.code).toBe(2);
      expect(flagged.stdout).toContain(
        `${manifestFile}: field "environment.network.allow[${index}]": "127.0.0.1:6379" is a loopback address (127.0.0.0/8)`,
      );
      expect(flagged.stderr).toContain('1 problem found');
    });
  },
);
