import { DEFAULT_HARNESS_PROFILE, HARNESS_PROFILES, type HarnessProfile } from '../config/harness-profile.js';

/**
 * The settings qwen-code reads from `<QWEN_HOME>/settings.json`, built from an episode's configuration: one
 * OpenAI-compatible provider (the episode's recording proxy), the sampling parameters, the output bound, and the
 * harness's own extras turned off: telemetry, usage statistics (qwen-code 0.24.4 otherwise sends them to an
 * outside host even with telemetry off), managed memory, the sleep inhibitor, and the bundled ripgrep (installed
 * without its run bit, it is probed and refused on every start; the built-in grep is used either way).
 */

export interface QwenSamplingSettings {
  temperature: number;
  topP: number;
  topK: number;
  seed: number;
  /** The bound on each model call's output tokens. */
  maxTokens: number;
  enableThinking: boolean;
}

interface QwenSettingsOptions {
  model: string;
  /** OpenAI-style base URL the harness calls, ending in `/v1`. */
  baseUrl: string;
  /** The name of the environment variable that holds the key (the key itself is passed in the environment). */
  apiKeyEnv: string;
  sampling: QwenSamplingSettings;
  /** Per model call, milliseconds. */
  requestTimeoutMs: number;
  contextWindowSize: number;
  /** Foreground shell commands without a timeout of their own (`SHELL_TIMEOUTS.defaultMs` in episodes). */
  shellTimeoutMs: number;
  /** The served model takes image input: the harness is told so (read_file returns images); default false. */
  images?: boolean;
  /** Tools the harness does not register at all (the model is never offered them), e.g. \`agent\`. */
  disabledTools?: readonly string[];
  /** What of qwen-code's own tools and skills the agents are offered (`harnessProfileSettings`); absent: `stock`. */
  profile?: HarnessProfile;
}

/** The profiles are the configuration's (`src/config/harness-profile.ts`). */
export { DEFAULT_HARNESS_PROFILE, HARNESS_PROFILES, type HarnessProfile };

/**
 * What the main session of `lean` declares to the model (qwen-code 0.24.4; `agent` gone when the orchestrator cannot
 * delegate): qwen-code's prompt builder keeps only the guidance on these (`massSystemPrompt`). send_message and
 * task_stop are deferred: reached through tool_search and tool_call, never declared.
 */
export const LEAN_DECLARED_TOOLS: readonly string[] = [
  'agent',
  'edit',
  'glob',
  'grep_search',
  'list_agents',
  'notebook_edit',
  'read_file',
  'run_shell_command',
  'tool_call',
  'tool_search',
  'write_file',
];

/**
 * The shell tool's limits as qwen-code 0.24.4's own description states them to the model ("If not specified, commands
 * will timeout after 120000ms", "up to 600000ms"), which no setting changes: the harness is configured to match, so
 * that what the model is told is what holds. The episode's wall clock bounds every command besides.
 */
export const SHELL_TIMEOUTS = { defaultMs: 120_000, maxMs: 600_000 } as const;

/**
 * The tools `lean` does not register. Kept: files (read, write, edit, notebooks), shell, search (glob, grep),
 * `agent` with what manages its background runs (list_agents, send_message, task_stop, and the tool_search bridge
 * that reaches the last two), and todo_write where enabled. qwen-code 0.24.4 has no setting that removes agent
 * types, so the `agent` tool still lists its built-in ones (claude-code, codex among them).
 */
export const LEAN_DISABLED_TOOLS: readonly string[] = [
  'web_fetch',
  'web_search',
  'monitor',
  'loop_wakeup',
  'cron_create',
  'cron_list',
  'cron_delete',
  'zoom_image',
  'image_gen',
  'enter_worktree',
  'exit_worktree',
  'read_mcp_resource',
  'record_artifact',
  'report_findings',
  'get_goal',
  'update_goal',
  'skill',
];

/** The settings a profile adds: `lean` drops the tools above and every bundled skill (browser-use, loop, new-app…). */
export function harnessProfileSettings(profile: HarnessProfile): {
  disabledTools: readonly string[];
  skills?: Record<string, unknown>;
} {
  if (profile === 'stock') return { disabledTools: [] };
  return { disabledTools: LEAN_DISABLED_TOOLS, skills: { disabledLevels: ['bundled'] } };
}

/** The tools the harness does not register: its profile's and `extra`. */
export function harnessDisabledTools(profile: HarnessProfile, extra: readonly string[]): string[] {
  return [...new Set([...harnessProfileSettings(profile).disabledTools, ...extra])];
}

/** The context the harness assumes when nothing narrower is known: Qwen3.6's native 262,144 tokens. */
export const DEFAULT_CONTEXT_WINDOW = 262_144;

export const DEFAULT_SAMPLING: Omit<QwenSamplingSettings, 'seed'> = {
  temperature: 0.6,
  topP: 0.95,
  topK: 20,
  maxTokens: 32_768,
  enableThinking: true,
};

export function qwenSettings(options: QwenSettingsOptions): Record<string, unknown> {
  const { sampling } = options;
  const profile = harnessProfileSettings(options.profile ?? 'stock');
  const disabledTools = harnessDisabledTools(options.profile ?? 'stock', options.disabledTools ?? []);
  return {
    $version: 4,
    modelProviders: {
      openai: [
        {
          id: options.model,
          envKey: options.apiKeyEnv,
          baseUrl: options.baseUrl,
          generationConfig: {
            timeout: options.requestTimeoutMs,
            // Retries belong to the loop, which records them; a harness retrying silently would hide failures.
            maxRetries: 0,
            contextWindowSize: options.contextWindowSize,
            // What the served model takes, as the run's configuration says (never guessed from its name).
            modalities: options.images ? { image: true } : {},
            extra_body: { chat_template_kwargs: { enable_thinking: sampling.enableThinking } },
            samplingParams: {
              temperature: sampling.temperature,
              top_p: sampling.topP,
              top_k: sampling.topK,
              max_tokens: sampling.maxTokens,
              seed: sampling.seed,
            },
          },
        },
      ],
    },
    security: { auth: { selectedType: 'openai' } },
    model: { name: options.model },
    tools: {
      shell: { defaultTimeoutMs: options.shellTimeoutMs },
      useRipgrep: false,
      ...(disabledTools.length ? { disabled: disabledTools } : {}),
    },
    ...(profile.skills ? { skills: profile.skills } : {}),
    // An episode runs headless: no sleep inhibitor (qwen-code otherwise starts systemd-inhibit for every model call
    // and tool run: 19–20 processes in a toy search of two episodes).
    general: { preventSystemSleep: false },
    memory: { enableManagedAutoMemory: false },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
  };
}
