import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { UserError } from '../../src/errors.js';
import { openRunSession } from '../../src/session/run-session.js';
import { temporaryDirectory } from '../support/fixtures.js';

const directory = temporaryDirectory('mass-session-');
afterAll(() => directory.remove());

function configFile(name: string, body: string): string {
  const file = join(directory.path, `${name}.yaml`);
  writeFileSync(file, [`name: ${name}`, `suite: ${DEMO_SUITE}`, body].join('\n'));
  return file;
}

describe('a run session', () => {
  it('opens the run once with the configuration, the model kind, the suite and the task folders', async () => {
    const file = configFile('toy-session', 'model: { kind: toy }\nroles: { executor: { model: mass-toy } }');
    const session = await openRunSession({
      configFile: file,
      runsDirectory: join(directory.path, 'runs'),
      command: 'test',
      adjust: (config) => ({ ...config, tasks: ['demo-potency'] }),
    });
    try {
      expect(session.config.name).toBe('toy-session');
      expect(session.config.tasks).toEqual(['demo-potency']);
      expect(session.kind.host.standIn).toBe('toy');
      expect(session.kind.runtimeLora).toBe(false);
      expect(session.suiteDir).toBe(DEMO_SUITE);
      // Read once: the same suite whoever asks.
      expect(await session.suite()).toBe(await session.suite());
      expect((await session.taskDirs()).map((dir) => dir.split('/').at(-1))).toEqual(['demo-potency']);
      expect(await session.registry()).toBe(await session.registry());
    } finally {
      await session.close();
    }
  });

  it('refuses what the model kind cannot honour naming the file, before the run directory is made', async () => {
    const file = configFile('served-unaddressed', 'roles: { executor: { model: some-model } }');
    const opened = openRunSession({
      configFile: file,
      runsDirectory: join(directory.path, 'never'),
      command: 'test',
    });
    await expect(opened).rejects.toThrow(UserError);
    await expect(opened).rejects.toThrow(/served-unaddressed\.yaml: roles\.executor\.baseUrl/);
  });
});
