import { pathToFileURL } from 'node:url';

import { qwenCodeChunkPath, writeHarnessPreload } from './harness-preload.js';
import { QWEN_CODE_VERSION } from './qwen-code.js';

/**
 * The `agent` tool as the lean profile offers it: only what works in mass's sandbox. qwen-code 0.24.4 has no setting
 * for this: it always lists the subagent types `claude-code` and `codex` (which start programs and reach services the
 * sandbox does not have) and always offers the parameters `isolation: "worktree"` and `working_dir` (which need the
 * workspace to be a git repository, and mass's never is). So the harness is started with a small preload (`--import`
 * in NODE_OPTIONS) that, before qwen-code builds a single tool, takes those subagent types out of qwen-code's built-in list
 * and those parameters out of the tool's schema and description. The preload changes what the harness offers, not what
 * it sends: every request still reaches the model as the harness made it.
 */

/** The chunk of qwen-code 0.24.4 that exports `BuiltinAgentRegistry` and `AgentTool`. */
const AGENT_CHUNK = 'chunks/chunk-DPEB6S2R.js';

/** Built-in subagent types that run an outside program (their `executor`): none is installed in the sandbox. */
export const REMOVED_AGENT_TYPES = ['claude-code', 'codex'] as const;
/** Parameters of the `agent` tool that need the workspace to be a git repository. */
export const REMOVED_AGENT_PARAMETERS = ['isolation', 'working_dir'] as const;

export const AGENT_TOOL_PRELOAD_FILE_NAME = 'agent-tool-profile.mjs';

/** The host path of qwen-code's chunk that defines the `agent` tool (inside the sandbox it is at the same path). */
export function agentToolChunkPath(): string {
  return qwenCodeChunkPath(AGENT_CHUNK);
}

/** The preload's source, importing qwen-code's chunk from `chunkPath`. */
export function agentToolPreloadSource(chunkPath: string): string {
  return `// Written by mass (src/harness/agent-tool-profile.ts) for qwen-code ${QWEN_CODE_VERSION}.
// It travels in NODE_OPTIONS to qwen-code's entry and the harness it starts (cli.js), and acts in the harness alone,
// which it then keeps from passing NODE_OPTIONS on to its agents' shells.
if (/\\/cli\\.js$/.test(process.argv[1] ?? '')) {
  delete process.env.NODE_OPTIONS;
  const { AgentTool, BuiltinAgentRegistry } = await import(${JSON.stringify(pathToFileURL(chunkPath).href)});
  const removedTypes = new Set(${JSON.stringify(REMOVED_AGENT_TYPES)});
  const removedParameters = ${JSON.stringify(REMOVED_AGENT_PARAMETERS)};
  if (!Array.isArray(BuiltinAgentRegistry?.BUILTIN_AGENTS) || typeof AgentTool?.prototype?.updateDescriptionAndSchema !== 'function') {
    throw new Error('mass: qwen-code is not ${QWEN_CODE_VERSION}: update src/harness/agent-tool-profile.ts');
  }
  BuiltinAgentRegistry.BUILTIN_AGENTS = BuiltinAgentRegistry.BUILTIN_AGENTS.filter((agent) => !removedTypes.has(agent.name));
  const describe = AgentTool.prototype.updateDescriptionAndSchema;
  AgentTool.prototype.updateDescriptionAndSchema = function () {
    describe.call(this);
    for (const name of removedParameters) delete this.parameterSchema?.properties?.[name];
    this.description = this.description
      .split('\\n')
      .filter((line) => !line.includes('isolation: "worktree"'))
      .map((line) => line.replace(/ Unnamed caller-owned \`working_dir\` launches[^\\n]*$/, ''))
      .join('\\n');
  };
}
`;
}

/** Writes the preload into `directory` (the sandbox's own read-only files) and returns its path. */
export function writeAgentToolPreload(directory: string): string {
  return writeHarnessPreload(
    directory,
    AGENT_TOOL_PRELOAD_FILE_NAME,
    agentToolPreloadSource(agentToolChunkPath()),
  );
}
