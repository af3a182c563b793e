import { realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import {
  REMOVED_AGENT_PARAMETERS,
  REMOVED_AGENT_TYPES,
  writeAgentToolPreload,
} from './agent-tool-profile.js';
import { CapturedOutputFile } from './captured-output.js';
import {
  guardedHarnessNode,
  harnessGuardOptions,
  writeHarnessGuard,
  type GuardedHarnessNode,
} from './guarded-node.js';
import { MAX_EVENT_LINE_BYTES, MAX_EVENT_LOG_BYTES } from './harness-events.js';
import { harnessNode, SCHEMA_CHECKS_FILE, type HarnessNode } from './harness-node.js';
import { packageDirectories } from './package-directories.js';
import type { HarnessTexts } from './harness-texts.js';
import { DELEGATION_TOOL } from '../workflow/delegation-tool.js';
import {
  DEFAULT_SAMPLING,
  LEAN_DECLARED_TOOLS,
  SHELL_TIMEOUTS,
  harnessDisabledTools,
  qwenSettings,
  type HarnessProfile,
  type QwenSamplingSettings,
} from './qwen-settings.js';
import { SCHEMA_CHECKS_VARIABLE, writeSchemaCheckPreload } from './schema-check-cache.js';
import { massSystemPrompt, sha256Text } from './system-prompt.js';
import { episodePath } from '../store/run-paths.js';
import { durationMs } from '../timer-duration.js';

/**
 * How qwen-code is started for an episode: its Node (guarded in a sandbox), its settings file, its command line and
 * environment, and the files its output is captured into. Where it runs (the sandbox, the proxy it calls) is the
 * caller's: it hands in a `HarnessPlace` and starts the command it gets back.
 */

const require = createRequire(import.meta.url);
const HARNESS_KEY_VARIABLE = 'MASS_PROXY_KEY';
/** What the harness sends to the proxy: a placeholder, the proxy holds the real key. */
const HARNESS_KEY_PLACEHOLDER = 'mass-episode-proxy';
/** The harness's standard error: diagnostics only, kept short. */
const STDERR_LIMITS = { maxLineBytes: 64 * 1024, maxFileBytes: 16 * 1024 ** 2 };
/** qwen-code's marker of a run inside a sandbox (any value but `bwrap` and `sandbox-exec`, which name its own). */
const SANDBOX_MARKER = 'mass';
/** The system prompt file in the harness's home (`QWEN_SYSTEM_MD`). */
const SYSTEM_PROMPT_FILE = 'system.md';

/** qwen-code ready to start: the Node it runs on and the executable it starts from. */
export interface QwenCodeInstallation {
  node: HarnessNode;
  /** The executable started: a run-only copy of `node` when guarded, else `node` itself. */
  executable: GuardedHarnessNode;
  /** Started from the guarded copy (in a bubblewrap sandbox). */
  guarded: boolean;
  /** Host folders the harness must be able to read: its package and dependencies, its Node and the executable. */
  readableDirectories: string[];
}

/**
 * The harness's Node (`node`, default `harnessNode()`) and, when `guarded` (in a sandbox), the copy of it that agent
 * code running as the same user cannot take over (see `guardedHarnessNode`); without a sandbox nothing is isolated
 * anyway.
 */
export async function prepareQwenCode(options: {
  node?: HarnessNode;
  guarded: boolean;
}): Promise<QwenCodeInstallation> {
  const node = options.node ?? (await harnessNode(harnessCliPath()));
  const executable = options.guarded ? guardedHarnessNode(node) : { path: node.path, closesInspector: false };
  return {
    node,
    executable,
    guarded: options.guarded,
    readableDirectories: [
      // The harness and the packages it loads (node-pty for its shell), never the checkout that holds them.
      ...packageDirectories(harnessPackageDirectory()),
      dirname(process.execPath),
      dirname(node.path),
      dirname(executable.path),
      ...(node.compileCacheDirectory === null ? [] : [node.compileCacheDirectory]),
    ],
  };
}

/** Where the harness runs, as the caller's sandbox lays it out. */
export interface HarnessPlace {
  /** The harness's home on the host, where `settings.json` is written. */
  homeDirectory: string;
  /** The same home as the harness sees it (`QWEN_HOME`). */
  homeInside: string;
  /** The episode's proxy as the harness reaches it, without `/v1`. */
  proxyBaseUrl: string;
  /**
   * The harness runs isolated (bubblewrap, or a trial's container): only then is the read-only compile cache given,
   * and the harness told it runs in a sandbox.
   */
  isolated: boolean;
  /** A host folder the harness may read but not write, for the guard's preload (used when guarded). */
  guardDirectory: string;
  /** A host path as the harness sees it. */
  pathInside(hostPath: string): string;
}

interface QwenCodeRunSettings {
  model: string;
  /** The sampling seed of every call. */
  seed: number;
  sampling?: Partial<Omit<QwenSamplingSettings, 'seed' | 'maxTokens'>>;
  /** Completion tokens per model call (default `DEFAULT_SAMPLING.maxTokens`). */
  maxOutputTokens?: number;
  /** The wall-clock limit of the run: bounds each model call and each shell command. */
  timeoutSeconds: number;
  contextWindowSize?: number;
  /** Without the delegation tool: the orchestrator cannot delegate. */
  singleAgent?: boolean;
  profile: HarnessProfile;
  /** The served model takes image input (the executor endpoint's `images`); default false. */
  images?: boolean;
}

/** What to start: the executable, its arguments and its whole environment; and the harness texts they put in force. */
export interface QwenCodeCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  texts: HarnessTexts;
}

/**
 * Writes the harness's `settings.json` (and, for the lean profile, its `system.md`) into its home and returns the
 * command that starts it there. Every text the model is sent is the harness's own: shaped by its settings and
 * variables (`SANDBOX`, `QWEN_SYSTEM_MD`), never by rewriting its requests.
 */
export async function qwenCodeCommand(
  installation: QwenCodeInstallation,
  place: HarnessPlace,
  settings: QwenCodeRunSettings,
): Promise<QwenCodeCommand> {
  const { node, executable } = installation;
  const disabledTools = settings.singleAgent ? [DELEGATION_TOOL] : [];
  const qwen = qwenSettings({
    model: settings.model,
    baseUrl: `${place.proxyBaseUrl}/v1`,
    apiKeyEnv: HARNESS_KEY_VARIABLE,
    sampling: {
      ...DEFAULT_SAMPLING,
      ...settings.sampling,
      maxTokens: settings.maxOutputTokens ?? DEFAULT_SAMPLING.maxTokens,
      seed: settings.seed,
    },
    requestTimeoutMs: durationMs(settings.timeoutSeconds, 's'),
    contextWindowSize: settings.contextWindowSize ?? 262_144,
    shellTimeoutMs: SHELL_TIMEOUTS.defaultMs,
    disabledTools,
    profile: settings.profile,
    images: settings.images ?? false,
  });
  await writeFile(join(place.homeDirectory, 'settings.json'), `${JSON.stringify(qwen, null, 2)}\n`);
  const systemPrompt =
    settings.profile === 'lean'
      ? await massSystemPrompt({
          model: settings.model,
          declaredTools: LEAN_DECLARED_TOOLS.filter((tool) => !disabledTools.includes(tool)),
          sandboxed: place.isolated,
        })
      : null;
  if (systemPrompt !== null) await writeFile(join(place.homeDirectory, SYSTEM_PROMPT_FILE), systemPrompt);
  // The lean profile's agent tool offers only the subagent types and parameters that work in the sandbox.
  const agentTool = settings.profile === 'lean' && !disabledTools.includes(DELEGATION_TOOL);
  const agentToolPreload = agentTool
    ? pathToFileURL(place.pathInside(writeAgentToolPreload(realpathSync(place.guardDirectory)))).href
    : null;
  // qwen-code's entry starts the harness proper (cli.js) as a child without passing its own flags on: preloads travel
  // in NODE_OPTIONS, which the harness then removes from its own environment (its agents' shells never see it).
  const guard = installation.guarded
    ? harnessGuardOptions(executable, place.pathInside(writeHarnessGuard(realpathSync(place.guardDirectory))))
    : {};
  const schemaCheckPreload = pathToFileURL(
    place.pathInside(writeSchemaCheckPreload(realpathSync(place.guardDirectory))),
  ).href;
  const nodeOptions = [
    guard.NODE_OPTIONS,
    `--import ${schemaCheckPreload}`,
    agentToolPreload === null ? undefined : `--import ${agentToolPreload}`,
  ]
    .filter((option) => option !== undefined)
    .join(' ');
  return {
    command: executable.path,
    args: [
      harnessCliPath(),
      '--model',
      settings.model,
      '--approval-mode',
      'yolo',
      '--output-format',
      'stream-json',
    ],
    env: {
      // Read-only inside: Node reads the warm cache and silently skips writing what it lacks, and the harness starts
      // from the warm run's schema answers. Without a sandbox the cache would be written from a run of agent code:
      // neither is given then.
      ...(node.compileCacheDirectory === null || !place.isolated
        ? {}
        : {
            NODE_COMPILE_CACHE: node.compileCacheDirectory,
            [SCHEMA_CHECKS_VARIABLE]: join(node.compileCacheDirectory, SCHEMA_CHECKS_FILE),
          }),
      ...(nodeOptions === '' ? {} : { NODE_OPTIONS: nodeOptions }),
      QWEN_HOME: place.homeInside,
      ...(place.isolated ? { SANDBOX: SANDBOX_MARKER } : {}),
      ...(systemPrompt === null ? {} : { QWEN_SYSTEM_MD: join(place.homeInside, SYSTEM_PROMPT_FILE) }),
      QWEN_TELEMETRY_ENABLED: 'false',
      QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
      // qwen-code otherwise starts a second copy of itself to raise the heap limit: a second start-up on every
      // episode. The watchdog bounds memory instead.
      QWEN_CODE_NO_RELAUNCH: 'true',
      [HARNESS_KEY_VARIABLE]: HARNESS_KEY_PLACEHOLDER,
    },
    texts: {
      systemPromptSha256: systemPrompt === null ? null : sha256Text(systemPrompt),
      sandboxMarker: place.isolated ? SANDBOX_MARKER : null,
      shellTimeoutMs: { default: SHELL_TIMEOUTS.defaultMs, max: SHELL_TIMEOUTS.maxMs },
      disabledTools: harnessDisabledTools(settings.profile, disabledTools),
      images: settings.images ?? false,
      agentTool: agentTool
        ? { removedTypes: [...REMOVED_AGENT_TYPES], removedParameters: [...REMOVED_AGENT_PARAMETERS] }
        : null,
    },
  };
}

/**
 * The files the harness's output goes to: its event stream (`events.jsonl`) and its standard error
 * (`harness-stderr.log`) in `directory`, each bounded. Pipes read here, never files the harness holds: agent code
 * reaches the harness's descriptors via /proc.
 */
export function captureQwenCodeOutput(directory: string): {
  events: CapturedOutputFile;
  stderr: CapturedOutputFile;
} {
  return {
    events: new CapturedOutputFile(episodePath(directory, 'harnessEvents'), {
      maxLineBytes: MAX_EVENT_LINE_BYTES,
      maxFileBytes: MAX_EVENT_LOG_BYTES,
    }),
    stderr: new CapturedOutputFile(episodePath(directory, 'harnessStderr'), STDERR_LIMITS),
  };
}

/** qwen-code, run on its own Node (`harnessNode`). */
function harnessPackageDirectory(): string {
  return dirname(require.resolve('@qwen-code/qwen-code/package.json'));
}

function harnessCliPath(): string {
  return require.resolve('@qwen-code/qwen-code/cli-entry.js');
}
