import { once } from 'node:events';
import {
  chmod,
  cp,
  mkdir,
  mkdtemp,
  readFile,
  rename,
  stat,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { isDirectory } from '../../src/tasks/file-kind.js';
import { MAX_CHECKOUT_FILE_BYTES, taskFilePath } from '../../src/tasks/official/checkout-file.js';
import { importOfficialTasks } from '../../src/tasks/official/import-official.js';

const fixture = fileURLToPath(new URL('../fixtures/official-checkout', import.meta.url));

async function freshDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'mass-import-files-'));
}

/** A copy of the fixture checkout holding task 11 alone, a secret file beside it, and a suite folder to import into. */
async function scene(splits: Record<string, unknown> = {}) {
  const dir = await freshDir();
  const checkout = path.join(dir, 'checkout');
  await cp(fixture, checkout, { recursive: true });
  await writeFile(
    path.join(checkout, 'tasks/splits.json'),
    JSON.stringify({ designated_train: [11], test: [], domains: { finance: [11] }, ...splits }),
  );
  const secretDir = await freshDir();
  const secret = path.join(secretDir, 'secret.txt');
  await writeFile(secret, 'the host secret\n', { mode: 0o600 });
  const out = path.join(dir, 'suite');
  return { checkout, secret, out, file: (relative: string) => path.join(checkout, relative) };
}

async function replaceWithLink(file: string, target: string): Promise<void> {
  await rename(file, `${file}.moved`);
  await symlink(target, file);
}

describe('what mass tasks import-official reads of a checkout', () => {
  it('refuses a task_prompt_pattern that climbs out of tasks/ through {task_id}/..', async () => {
    const { checkout, secret, out } = await scene();
    const up = path.relative(path.join(checkout, 'tasks'), '/');
    const pattern = `${up}/{task_id}/..${path.dirname(secret)}/secret.txt`;
    await writeFile(
      path.join(checkout, 'tasks/splits.json'),
      JSON.stringify({
        designated_train: [11],
        test: [],
        domains: { finance: [11] },
        task_prompt_pattern: pattern,
      }),
    );
    await expect(importOfficialTasks(checkout, out)).rejects.toThrow(
      /tasks\/splits\.json: field "task_prompt_pattern" .* for task 11, which is not a file inside the checkout's tasks\/ folder/,
    );
    expect(await isDirectory(out)).toBe(false);
  });

  it('refuses patterns that leave tasks/ otherwise, and task ids that could change folders', async () => {
    expect(taskFilePath('bare/query{task_id}.txt', '11', 'task_prompt_pattern')).toBe(
      'tasks/bare/query11.txt',
    );
    expect(taskFilePath('bare/{task_id}/../query{task_id}.txt', '7', 'f')).toBe('tasks/bare/query7.txt');
    for (const pattern of ['/etc/{task_id}', '../{task_id}.txt', '{task_id}/../..', 'bare/{task_id}\0.txt'])
      expect(() => taskFilePath(pattern, '11', 'task_prompt_pattern'), pattern).toThrow(
        /field "task_prompt_pattern"/,
      );
    for (const id of ['..', '1/2', '1\0', ''])
      expect(() => taskFilePath('bare/query{task_id}.txt', id, 'task_prompt_pattern'), id).toThrow(/task id/);
  });

  it('refuses a linked query file, team file, teacher directive and tasks list, naming the file', async () => {
    const cases = [
      ['tasks/bare/query11.txt', "task 11's bare query"],
      ['tasks/initial/query11_ourTeam.txt', "task 11's initial team"],
      ['tasks/teacher_directive.txt', 'the teacher directive'],
      ['tasks/splits.json', 'the official tasks list'],
    ] as const;
    for (const [relative, what] of cases) {
      const { checkout, secret, out, file } = await scene();
      await replaceWithLink(file(relative), secret);
      const refusal = importOfficialTasks(checkout, out);
      await expect(refusal, relative).rejects.toThrow(`${relative} (${what}) is a symbolic link`);
      await expect(refusal).rejects.toThrow(/replace the link with the file itself/);
      expect(await isDirectory(out)).toBe(false);
    }
  });

  it('refuses a file under a folder that is a link, even when the link stays inside the checkout', async () => {
    const { checkout, out, file } = await scene();
    await rename(file('tasks/bare'), file('tasks/bare-real'));
    await symlink('bare-real', file('tasks/bare'));
    await expect(importOfficialTasks(checkout, out)).rejects.toThrow(
      "tasks/bare/query11.txt (task 11's bare query) lies under tasks/bare, a symbolic link",
    );
  });

  it('refuses /dev/zero as a query at once, as a link or through the pattern, never reading it', async () => {
    const linked = await scene();
    await replaceWithLink(linked.file('tasks/bare/query11.txt'), '/dev/zero');
    const started = Date.now();
    await expect(importOfficialTasks(linked.checkout, linked.out)).rejects.toThrow(/is a symbolic link/);
    const climbing = await scene({ task_prompt_pattern: '{task_id}/../../../../../../../../../../dev/zero' });
    await expect(importOfficialTasks(climbing.checkout, climbing.out)).rejects.toThrow(/not a file inside/);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 10_000);

  it('refuses a folder, a socket and a file past the cap in place of a query file', async () => {
    const folder = await scene();
    await rename(folder.file('tasks/bare/query11.txt'), folder.file('tasks/moved.txt'));
    await mkdir(folder.file('tasks/bare/query11.txt'));
    await expect(importOfficialTasks(folder.checkout, folder.out)).rejects.toThrow(
      /tasks\/bare\/query11\.txt \(task 11's bare query\) is a folder, not a regular file/,
    );

    const socket = await scene();
    await rename(socket.file('tasks/initial/query11_ourTeam.txt'), socket.file('tasks/moved.txt'));
    const server = createServer().listen(socket.file('tasks/initial/query11_ourTeam.txt'));
    await once(server, 'listening');
    try {
      await expect(importOfficialTasks(socket.checkout, socket.out)).rejects.toThrow(
        /query11_ourTeam\.txt \(task 11's initial team\) is a socket, not a regular file/,
      );
    } finally {
      server.close();
    }

    const large = await scene();
    await truncate(large.file('tasks/bare/query11.txt'), MAX_CHECKOUT_FILE_BYTES + 1);
    await expect(importOfficialTasks(large.checkout, large.out)).rejects.toThrow(
      /query11\.txt \(task 11's bare query\) is larger than 1 MiB, the most the importer reads of one file/,
    );
  });

  it('writes what it makes of a file only others may not read as readable by its owner alone', async () => {
    const { checkout, out, file } = await scene();
    await chmod(file('tasks/bare/query11.txt'), 0o600);
    await importOfficialTasks(checkout, out);
    for (const made of ['query11/prompt.md', 'query11/team.md', 'query11/task.yaml'])
      expect((await stat(path.join(out, made))).mode & 0o777, made).toBe(0o600);
    expect((await stat(path.join(out, 'teacher-directive.md'))).mode & 0o777).toBe(0o644);
    expect(await readFile(path.join(out, 'query11/prompt.md'), 'utf8')).toBe(
      await readFile(file('tasks/bare/query11.txt'), 'utf8'),
    );
  });

  it('leaves the addresses a query names out of the allow-list, and prints and records what it left out', async () => {
    const { checkout, out, file } = await scene();
    const extra =
      ' Cache in Redis at http://127.0.0.1:6379/, call the server at 10.0.0.5:8000, and read 169.254.169.254.';
    for (const relative of ['tasks/bare/query11.txt', 'tasks/initial/query11_ourTeam.txt']) {
      const text = await readFile(file(relative), 'utf8');
      await writeFile(file(relative), text.replace('for definitions.', `for definitions.${extra}`));
    }
    const imported = await importOfficialTasks(checkout, out);
    const leftOut = [
      { entry: '10.0.0.5:8000', why: 'a private address (10.0.0.0/8)' },
      { entry: '127.0.0.1:6379', why: 'a loopback address (127.0.0.0/8)' },
      { entry: '169.254.169.254', why: 'a cloud metadata address (169.254.169.254/32)' },
    ];
    expect(imported.tasks[0]!.hostsLeftOut).toEqual(leftOut);
    const manifest = await readFile(path.join(out, 'query11/task.yaml'), 'utf8');
    expect(manifest).toContain('#   127.0.0.1:6379: a loopback address (127.0.0.0/8)\n');
    const allow = imported.tasks[0]!.hosts;
    expect(allow).toEqual(expect.arrayContaining(['example-rates.org', 'fred.stlouisfed.org']));
    expect(allow.filter((host) => /\d+\.\d+\.\d+\.\d+/.test(host))).toEqual([]);
    const record = JSON.parse(await readFile(path.join(out, 'import.json'), 'utf8'));
    expect(record.tasks[0].networkAllow).toEqual(allow);
    expect(record.tasks[0].networkLeftOut).toEqual(leftOut);
  });
});
