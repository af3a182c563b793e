import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { UNSANDBOXED_WARNING } from '../../src/episode/sandbox.js';
import { temporaryDirectory } from '../support/fixtures.js';
import {
  LINGERING_PROCESSES_SCRIPT,
  capture,
  openSandbox,
  processesMentioning,
  uniqueMarker,
} from './sandbox-helpers.js';

describe('sandbox: where bubblewrap cannot run', () => {
  it('says how to fix a missing bwrap', async () => {
    const opening = openSandbox('bubblewrap', { bwrapPath: '/nonexistent/bwrap' });
    await expect(opening).rejects.toThrow(UserError);
    await expect(opening).rejects.toThrow(
      /no bwrap at \/nonexistent\/bwrap: install bubblewrap \(apt-get install bubblewrap\) or pass --no-sandbox/,
    );
  });

  it('says how to fix a bwrap that cannot create namespaces, with its own reason', async () => {
    const directory = temporaryDirectory();
    try {
      // A stand-in for bwrap in a container without user namespaces: same message, same exit status.
      const bwrapPath = join(directory.path, 'bwrap');
      writeFileSync(
        bwrapPath,
        '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n',
      );
      chmodSync(bwrapPath, 0o755);
      const opening = openSandbox('bubblewrap', { bwrapPath });
      await expect(opening).rejects.toThrow(UserError);
      await expect(opening).rejects.toThrow(
        /cannot create a sandbox here: bwrap: No permissions to create new namespace; install bubblewrap .* or pass --no-sandbox/,
      );
    } finally {
      directory.remove();
    }
  });
});

describe('sandbox: the explicit unsandboxed mode', () => {
  it('warns that nothing is isolated', async () => {
    const fixture = await openSandbox('unsandboxed');
    try {
      expect(fixture.warnings).toEqual([UNSANDBOXED_WARNING]);
      expect(UNSANDBOXED_WARNING).toMatch(/WITHOUT a sandbox/);
    } finally {
      await fixture.close();
    }
  });

  it('still kills the whole tree: nohup, setsid and a double fork, which leave the process group', async () => {
    const fixture = await openSandbox('unsandboxed');
    const marker = uniqueMarker();
    try {
      const output = capture();
      const result = await fixture.sandbox.run({
        command: '/bin/sh',
        args: ['-c', LINGERING_PROCESSES_SCRIPT],
        env: { MARKER: marker },
        stdout: output.sink,
        limits: { wallClockSeconds: 20 },
      });
      expect(result).toMatchObject({ exitCode: 0, sandboxed: false });
      expect(output.text()).toContain('lingering processes: 3');
      expect(processesMentioning(marker)).toEqual([]);
    } finally {
      await fixture.close();
    }
  });
});
