/**
 * What of qwen-code's own tools and skills the agents are offered (`harnessProfile`). `lean` (the default of
 * episodes): qwen-code without the tools and skills that cannot work in the sandbox (no network, no display, no git,
 * no MCP server, no user to wait for) or that no research task needs, which every model call would otherwise carry in
 * its prompt. `stock`: qwen-code's defaults, for comparison with the official set-up.
 */
export const HARNESS_PROFILES = ['lean', 'stock'] as const;
export type HarnessProfile = (typeof HARNESS_PROFILES)[number];
export const DEFAULT_HARNESS_PROFILE: HarnessProfile = 'lean';
