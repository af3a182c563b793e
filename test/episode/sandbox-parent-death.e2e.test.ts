import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { temporaryDirectory } from '../support/fixtures.js';
import { LINGERING_PROCESSES_SCRIPT, processesMentioning, uniqueMarker } from './sandbox-helpers.js';

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));
const sandboxModule = join(repositoryRoot, 'src', 'episode', 'sandbox.ts');

describe('sandbox: the tree dies with the process that opened it', () => {
  it('leaves nothing behind when mass itself is killed with SIGKILL mid-run', async () => {
    const directory = temporaryDirectory();
    const marker = uniqueMarker();
    try {
      const workspace = join(directory.path, 'workspace');
      mkdirSync(workspace);
      const script = join(directory.path, 'open-and-run.mts');
      writeFileSync(
        script,
        `import { Sandbox } from ${JSON.stringify(sandboxModule)};
const sandbox = await Sandbox.open({ mode: 'bubblewrap', workspace: ${JSON.stringify(workspace)},
  stateDirectory: ${JSON.stringify(join(directory.path, 'sandbox'))} });
await sandbox.run({ command: '/bin/sh', args: ['-c', ${JSON.stringify(`${LINGERING_PROCESSES_SCRIPT}\nsleep 1000`)}],
  env: { MARKER: ${JSON.stringify(marker)} }, stdout: { onData: (chunk) => process.stdout.write(chunk) } });
`,
      );
      const parent = spawn(process.execPath, ['--import', 'tsx', script], {
        cwd: repositoryRoot,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      await new Promise<void>((resolve, reject) => {
        parent.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('lingering processes: 3')) resolve();
        });
        parent.once('exit', () => reject(new Error(`the parent exited early: ${output}`)));
      });
      expect(processesMentioning(marker).length).toBeGreaterThanOrEqual(4);
      parent.kill('SIGKILL');
      let survivors = processesMentioning(marker);
      for (let attempt = 0; attempt < 100 && survivors.length > 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        survivors = processesMentioning(marker);
      }
      expect(survivors).toEqual([]);
    } finally {
      directory.remove();
    }
  });
});
