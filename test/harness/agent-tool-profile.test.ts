import { pathToFileURL } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import {
  agentToolChunkPath,
  REMOVED_AGENT_PARAMETERS,
  writeAgentToolPreload,
} from '../../src/harness/agent-tool-profile.js';
import { temporaryDirectory } from '../support/fixtures.js';

interface QwenAgentChunk {
  BuiltinAgentRegistry: { getBuiltinAgentNames(): string[] };
  AgentTool: { prototype: { updateDescriptionAndSchema(this: unknown): void } };
}

/** What the agent tool's description and schema become, for a tool object shaped as qwen-code's own. */
function describedTool(chunk: QwenAgentChunk) {
  const tool = {
    availableSubagents: [{ name: 'general-purpose', description: 'General-purpose agent.' }],
    config: { isAgentTeamEnabled: () => false, isTodoWriteEnabled: () => false },
    subagentManager: { getAvailableModelGrades: () => new Map() },
    parameterSchema: {
      properties: { prompt: {}, description: {}, run_in_background: {}, isolation: {}, working_dir: {} },
    },
    description: '',
  };
  chunk.AgentTool.prototype.updateDescriptionAndSchema.call(tool);
  return tool;
}

describe("the lean profile's agent tool (qwen-code loaded in this process, as the preload loads it)", () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());

  it('offers no subagent type that runs an outside program, and no parameter that needs a git repository', async () => {
    const chunk = (await import(pathToFileURL(agentToolChunkPath()).href)) as QwenAgentChunk;
    // As qwen-code ships it: what the issue found.
    expect(chunk.BuiltinAgentRegistry.getBuiltinAgentNames()).toEqual(
      expect.arrayContaining(['claude-code', 'codex']),
    );
    const shipped = describedTool(chunk);
    expect(shipped.description).toContain('isolation: "worktree"');
    expect(shipped.description).toContain('`working_dir`');

    // The preload acts only in the harness proper, qwen-code's cli.js.
    const [entry, options] = [process.argv[1], process.env.NODE_OPTIONS];
    process.argv[1] = '/opt/qwen-code/cli.js';
    process.env.NODE_OPTIONS = '--import something';
    try {
      await import(pathToFileURL(writeAgentToolPreload(directory.path)).href);
      expect(process.env.NODE_OPTIONS).toBeUndefined();
    } finally {
      process.argv[1] = entry!;
      if (options === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = options;
    }

    const names = chunk.BuiltinAgentRegistry.getBuiltinAgentNames();
    expect(names).not.toContain('claude-code');
    expect(names).not.toContain('codex');
    expect(names).toContain('general-purpose');
    const trimmed = describedTool(chunk);
    expect(Object.keys(trimmed.parameterSchema.properties)).toEqual([
      'prompt',
      'description',
      'run_in_background',
    ]);
    for (const name of REMOVED_AGENT_PARAMETERS) expect(trimmed.description).not.toContain(name);
    expect(trimmed.description).toContain('- **general-purpose**: General-purpose agent.');
    expect(trimmed.description).toContain('Top-level regular subagents run in the background by default.');
  });
});
