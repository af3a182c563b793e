import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { AGENT_TOOL_PRELOAD_FILE_NAME } from '../../src/harness/agent-tool-profile.js';
import { HarnessTexts } from '../../src/harness/harness-texts.js';
import { qwenCodeCommand, type QwenCodeInstallation } from '../../src/harness/launch-qwen-code.js';
import { LEAN_DECLARED_TOOLS, SHELL_TIMEOUTS } from '../../src/harness/qwen-settings.js';
import { SCHEMA_CHECK_PRELOAD_FILE_NAME } from '../../src/harness/schema-check-cache.js';
import {
  SANDBOX_SECTION,
  massSystemPrompt,
  qwenCodeDefaultPrompt,
  sha256Text,
} from '../../src/harness/system-prompt.js';
import { temporaryDirectory } from '../support/fixtures.js';

/** The tools a prompt tells the model to call by name ('read_file', 'agent' …). */
function quotedToolNames(prompt: string, candidates: readonly string[]): string[] {
  return candidates.filter((tool) => prompt.includes(`'${tool}'`));
}

describe("the lean harness's system prompt: qwen-code's own, true in mass's sandbox", () => {
  it('says the agents run in a sandbox with the network the task allows, and names no skill', async () => {
    const prompt = await massSystemPrompt({
      model: 'm',
      declaredTools: LEAN_DECLARED_TOOLS,
      sandboxed: true,
    });
    const stock = await qwenCodeDefaultPrompt('m', LEAN_DECLARED_TOOLS);
    // qwen-code's own texts, untrue here, as a check that the builder is the one edited.
    expect(stock).toContain('# Outside of Sandbox');
    expect(stock).toContain('skill="new-app"');

    expect(prompt).toMatch(/^You are Qwen Code, a non-interactive CLI agent/);
    expect(prompt).not.toContain('Outside of Sandbox');
    expect(prompt).not.toMatch(/skill/i);
    expect(prompt).not.toContain("'/help'");
    expect(prompt).not.toContain('# Git Repository');
    expect(prompt).toContain(SANDBOX_SECTION);
    expect(SANDBOX_SECTION).toMatch(
      /no network access beyond the hosts the task's environment section allows/,
    );
    // Every other section is qwen-code's, unchanged.
    for (const kept of [
      '# Core Mandates',
      '## Using Your Tools',
      '# Executing actions with care',
      '# Final Reminder',
    ])
      expect(prompt).toContain(kept);
  });

  it("keeps qwen-code's guidance on the declared tools only", async () => {
    const everyTool = [...LEAN_DECLARED_TOOLS, 'monitor', 'todo_write', 'skill', 'web_fetch'];
    const lean = await massSystemPrompt({ model: 'm', declaredTools: LEAN_DECLARED_TOOLS, sandboxed: true });
    for (const tool of quotedToolNames(lean, everyTool)) expect(LEAN_DECLARED_TOOLS).toContain(tool);
    expect(lean).toContain("'agent'");
    const single = await massSystemPrompt({
      model: 'm',
      declaredTools: LEAN_DECLARED_TOOLS.filter((tool) => tool !== 'agent'),
      sandboxed: true,
    });
    expect(single).not.toContain('**Subagent Delegation:**');
  });

  it("keeps qwen-code's own section when the harness runs unsandboxed: then it is the truth", async () => {
    const prompt = await massSystemPrompt({
      model: 'm',
      declaredTools: LEAN_DECLARED_TOOLS,
      sandboxed: false,
    });
    expect(prompt).toContain('# Outside of Sandbox');
    expect(prompt).not.toContain(SANDBOX_SECTION);
  });

  it("is not shaped by this process's own qwen-code variables", async () => {
    const before = await massSystemPrompt({
      model: 'm',
      declaredTools: LEAN_DECLARED_TOOLS,
      sandboxed: true,
    });
    process.env.SANDBOX = 'sandbox-exec';
    process.env.QWEN_SYSTEM_MD = '/nonexistent/system.md';
    try {
      expect(
        await massSystemPrompt({ model: 'm', declaredTools: LEAN_DECLARED_TOOLS, sandboxed: true }),
      ).toBe(before);
      expect(process.env.SANDBOX).toBe('sandbox-exec');
    } finally {
      delete process.env.SANDBOX;
      delete process.env.QWEN_SYSTEM_MD;
    }
  });
});

describe("the harness's launch: settings and environment that make its texts true", () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());
  const installation: QwenCodeInstallation = {
    node: { path: '/opt/node/bin/node', version: '22.23.5', compileCacheDirectory: null },
    executable: { path: '/opt/node/bin/node', closesInspector: false },
    guarded: false,
    readableDirectories: [],
  };

  async function launch(
    name: string,
    options: { isolated: boolean; profile: 'lean' | 'stock'; images?: boolean; singleAgent?: boolean },
  ) {
    const home = join(directory.path, name);
    mkdirSync(home);
    const command = await qwenCodeCommand(
      installation,
      {
        homeDirectory: home,
        homeInside: '/home/agent',
        proxyBaseUrl: 'http://127.0.0.1:9',
        isolated: options.isolated,
        guardDirectory: home,
        pathInside: (path) => path,
      },
      {
        model: 'team-model',
        seed: 3,
        timeoutSeconds: 3600,
        profile: options.profile,
        ...(options.images === undefined ? {} : { images: options.images }),
        ...(options.singleAgent ? { singleAgent: true } : {}),
      },
    );
    const settings = JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')) as {
      tools: { shell: { defaultTimeoutMs: number }; disabled?: string[] };
      modelProviders: { openai: Array<{ generationConfig: { modalities: Record<string, boolean> } }> };
      general: { preventSystemSleep: boolean };
    };
    return { command, settings, home };
  }

  it('lean in a sandbox: the SANDBOX marker, the system prompt file, the shell limits its description states', async () => {
    const { command, settings, home } = await launch('lean', { isolated: true, profile: 'lean' });
    expect(command.env.SANDBOX).toBe('mass');
    expect(command.env.QWEN_SYSTEM_MD).toBe('/home/agent/system.md');
    const prompt = readFileSync(join(home, 'system.md'), 'utf8');
    expect(prompt).toContain(SANDBOX_SECTION);
    // qwen-code's shell description: "up to 600000ms", "If not specified, commands will timeout after 120000ms".
    expect(settings.tools.shell.defaultTimeoutMs).toBe(120_000);
    // Headless: no systemd-inhibit around every model call and tool run.
    expect(settings.general.preventSystemSleep).toBe(false);
    expect(SHELL_TIMEOUTS).toEqual({ defaultMs: 120_000, maxMs: 600_000 });
    expect(settings.modelProviders.openai[0]!.generationConfig.modalities).toEqual({});
    expect(HarnessTexts.parse(command.texts)).toEqual({
      systemPromptSha256: sha256Text(prompt),
      sandboxMarker: 'mass',
      shellTimeoutMs: { default: 120_000, max: 600_000 },
      disabledTools: settings.tools.disabled,
      images: false,
      agentTool: { removedTypes: ['claude-code', 'codex'], removedParameters: ['isolation', 'working_dir'] },
    });
    // The preloads that cache the schema checks and trim the agent tool run before qwen-code, from the sandbox's
    // read-only files.
    expect(command.env.NODE_OPTIONS).toBe(
      [SCHEMA_CHECK_PRELOAD_FILE_NAME, AGENT_TOOL_PRELOAD_FILE_NAME]
        .map((name) => `--import ${pathToFileURL(join(home, name)).href}`)
        .join(' '),
    );
    expect(command.texts.disabledTools).toContain('skill');
  });

  it('a model that takes images: the harness is told so through its modalities, and the record says so', async () => {
    const { command, settings } = await launch('images', { isolated: true, profile: 'lean', images: true });
    expect(settings.modelProviders.openai[0]!.generationConfig.modalities).toEqual({ image: true });
    expect(command.texts.images).toBe(true);
  });

  it('the single-agent baseline: no agent tool, and no delegation guidance in the prompt', async () => {
    const { command, home } = await launch('single', { isolated: true, profile: 'lean', singleAgent: true });
    expect(command.texts.disabledTools).toContain('agent');
    expect(command.texts.agentTool).toBeNull();
    expect(command.env.NODE_OPTIONS).toBe(
      `--import ${pathToFileURL(join(home, SCHEMA_CHECK_PRELOAD_FILE_NAME)).href}`,
    );
    expect(readFileSync(join(home, 'system.md'), 'utf8')).not.toContain("'agent'");
  });

  it("stock: qwen-code's own prompt (no file), told it is sandboxed; unsandboxed: no marker", async () => {
    const stock = await launch('stock', { isolated: true, profile: 'stock' });
    expect(stock.command.env.QWEN_SYSTEM_MD).toBeUndefined();
    expect(existsSync(join(stock.home, 'system.md'))).toBe(false);
    expect(stock.command.env.SANDBOX).toBe('mass');
    expect(stock.command.texts.systemPromptSha256).toBeNull();
    expect(stock.command.texts.agentTool).toBeNull();
    const bare = await launch('bare', { isolated: false, profile: 'lean' });
    expect(bare.command.env.SANDBOX).toBeUndefined();
    expect(bare.command.texts.sandboxMarker).toBeNull();
    expect(readFileSync(join(bare.home, 'system.md'), 'utf8')).toContain('# Outside of Sandbox');
  });
});
