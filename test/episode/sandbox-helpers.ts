import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import {
  Sandbox,
  type OutputSink,
  type SandboxMode,
  type SandboxOptions,
} from '../../src/episode/sandbox.js';
import { temporaryDirectory } from '../support/fixtures.js';

export const MODES: SandboxMode[] = ['bubblewrap', 'unsandboxed'];

export interface SandboxFixture {
  sandbox: Sandbox;
  /** The temporary directory holding the workspace and the sandbox's state. */
  root: string;
  workspace: string;
  warnings: string[];
  close(): Promise<void>;
}

type FixtureOptions = Partial<Omit<SandboxOptions, 'mode'>>;

/** A sandbox on a fresh workspace; `options` may be computed from the workspace once it exists (and is filled). */
export async function openSandbox(
  mode: SandboxMode,
  options: FixtureOptions | ((paths: { root: string; workspace: string }) => FixtureOptions) = {},
): Promise<SandboxFixture> {
  const directory = temporaryDirectory('mass-sandbox-');
  const workspace = join(directory.path, 'workspace');
  mkdirSync(workspace);
  const warnings: string[] = [];
  const extra = typeof options === 'function' ? options({ root: directory.path, workspace }) : options;
  let sandbox: Sandbox;
  try {
    sandbox = await Sandbox.open({
      mode,
      workspace,
      stateDirectory: join(directory.path, 'sandbox'),
      warn: (message) => warnings.push(message),
      ...extra,
    });
  } catch (error) {
    directory.remove();
    throw error;
  }
  return {
    sandbox,
    root: directory.path,
    workspace,
    warnings,
    close: async () => {
      await sandbox.close();
      directory.remove();
    },
  };
}

/** A sink that keeps what the command wrote, as text. */
export function capture(): { sink: OutputSink; text: () => string } {
  const chunks: Buffer[] = [];
  return {
    sink: { onData: (chunk) => chunks.push(chunk) },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

export function uniqueMarker(): string {
  return `mass-test-${randomUUID()}`;
}

/** Host processes whose command line or environment mentions `marker`. */
export function processesMentioning(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const environment = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (commandLine.includes(marker) || environment.includes(marker)) {
        found.push(`${pid}: ${commandLine.replaceAll('\0', ' ')}`);
      }
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

/**
 * Shell code that starts three processes meant to outlive the run, each named by `$MARKER` on its command line,
 * and prints how many of them run (`lingering processes: 3`). The bracket keeps grep from counting itself.
 */
export const LINGERING_PROCESSES_SCRIPT = `
nohup sh -c 'sleep 1000; exit' "$MARKER-nohup" >/dev/null 2>&1 &
setsid sh -c 'sleep 1000; exit' "$MARKER-setsid" >/dev/null 2>&1 &
/usr/bin/python3 - "$MARKER-double-fork" <<'PYTHON'
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp('sh', ['sh', '-c', 'sleep 1000; exit', sys.argv[1]])
    os._exit(0)
os.wait()
PYTHON
sleep 0.2
echo "lingering processes: $(grep -l -- "$MARKER-[nsd]" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)"
`;
