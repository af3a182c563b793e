import { z } from 'zod';

/**
 * Which of the harness's texts were in force in an episode (`episode.json`'s `harness.texts`): what shaped the system
 * prompt and the tools the model was offered, beyond the profile.
 */
export const HarnessTexts = z.object({
  /**
   * The main session's system prompt given through qwen-code's `QWEN_SYSTEM_MD` (`massSystemPrompt`), by its SHA-256
   * (the file is `system.md` in the episode's harness home); null: qwen-code's own default prompt.
   */
  systemPromptSha256: z.string().nullable(),
  /** The `SANDBOX` marker qwen-code was started with (it then knows it runs sandboxed); null: none, unsandboxed. */
  sandboxMarker: z.string().nullable(),
  /** The shell tool's default and maximum timeout, as configured and as its description states them. */
  shellTimeoutMs: z.object({ default: z.number().int(), max: z.number().int() }),
  /** The tools the harness did not register (its `tools.disabled`). */
  disabledTools: z.array(z.string()),
  /** The harness was told the model takes image input. */
  images: z.boolean(),
  /**
   * What mass took out of the `agent` tool (src/harness/agent-tool-profile.ts): subagent types and parameters that
   * cannot work in the sandbox; null when it was offered as qwen-code ships it, or not at all. Absent in records
   * written before.
   */
  agentTool: z
    .object({ removedTypes: z.array(z.string()), removedParameters: z.array(z.string()) })
    .nullable()
    .optional(),
});
export type HarnessTexts = z.infer<typeof HarnessTexts>;
