/** OpenAI's `reasoning_effort` levels (also vLLM's; Anthropic's `output_config.effort`), in rising order. */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];
