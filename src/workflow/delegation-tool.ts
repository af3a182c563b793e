/**
 * The tool a team's orchestrator delegates to its agents with, under the harness's own name for it (qwen-code 0.24.4
 * calls it `agent`; `run_in_background` defaults to true for top-level subagents). The workflow's prompts name it, the
 * harness launches with it, and trajectories are read by it.
 */
export const DELEGATION_TOOL = 'agent';
