import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { QWEN_CODE_VERSION } from './qwen-code.js';

/**
 * The main session's system prompt the lean harness runs with (through qwen-code's own `QWEN_SYSTEM_MD`): qwen-code's
 * default prompt, built by qwen-code's own builder for the tools the session declares, with the sections that are
 * untrue in mass's sandbox replaced or left out. qwen-code has no setting for these sections: its sandbox section
 * reads the `SANDBOX` marker only, and its "New Applications" section names the `skill` tool whether it is offered or
 * not. Subagents' prompts are qwen-code's own (they hold neither section).
 */

/** The chunk of qwen-code 0.24.4 that exports its prompt builder (`getCoreSystemPrompt`). */
const PROMPT_CHUNK = 'chunks/chunk-JE3J5HFM.js';

/** The variables qwen-code's builder reads: none of them is given to the harness, so none may shape its prompt here. */
const BUILDER_VARIABLES = [
  'SANDBOX',
  'QWEN_SYSTEM_MD',
  'QWEN_WRITE_SYSTEM_MD',
  'QWEN_SYSTEM_IDENTITY_MD',
  'QWEN_CODE_TOOL_CALL_STYLE',
] as const;

/**
 * What the sandbox's section says: mass's sandbox (bubblewrap, or a trial's container) with the network the task
 * allows. The task prompt's environment section names the hosts.
 */
export const SANDBOX_SECTION = `# Sandbox
You are running in a sandbox set up for this task, not on a person's own system, and no one watches the run or answers questions. Your working directory is the task's workspace: what you leave there is what is kept after the run. Files outside the workspace, your home directory and /tmp are read-only or absent, unless the task says otherwise. There is no network access beyond the hosts the task's environment section allows (none if it allows none). When the sandbox refuses something (a 'Read-only file system' or 'Permission denied' error, a refused connection), that is a limit of this environment: report it, and do not try to work around it by writing elsewhere or by escalating privileges.`;

type PromptBuilder = (
  userMemory: undefined,
  model: string,
  appendInstruction: undefined,
  interactionMode: string,
  outputStyle: undefined,
  todoWriteEnabled: boolean,
  codeModeOnly: boolean,
  options: { declaredTools: Set<string> },
) => string;

let builder: Promise<PromptBuilder> | null = null;

/** qwen-code's own prompt builder, loaded once from its package. */
function promptBuilder(): Promise<PromptBuilder> {
  builder ??= (async () => {
    const require = createRequire(import.meta.url);
    const packageDirectory = dirname(require.resolve('@qwen-code/qwen-code/package.json'));
    const module = (await import(pathToFileURL(join(packageDirectory, PROMPT_CHUNK)).href)) as {
      getCoreSystemPrompt?: PromptBuilder;
    };
    if (typeof module.getCoreSystemPrompt !== 'function') {
      throw new Error(
        `qwen-code's ${PROMPT_CHUNK} exports no getCoreSystemPrompt: src/harness/system-prompt.ts is written for qwen-code ${QWEN_CODE_VERSION}; update PROMPT_CHUNK for the installed version`,
      );
    }
    return module.getCoreSystemPrompt;
  })();
  return builder;
}

/**
 * qwen-code's default main-session prompt, as it builds it for a headless run (`--output-format stream-json`) of
 * `model` declaring `declaredTools`, outside any sandbox and outside a git repository; this process's own variables
 * are kept out of it.
 */
export async function qwenCodeDefaultPrompt(
  model: string,
  declaredTools: readonly string[],
): Promise<string> {
  const build = await promptBuilder();
  const saved = BUILDER_VARIABLES.map((name) => [name, process.env[name]] as const);
  for (const name of BUILDER_VARIABLES) delete process.env[name];
  try {
    const prompt = build(undefined, model, undefined, 'headless', undefined, false, false, {
      declaredTools: new Set(declaredTools),
    });
    // The builder adds a git section when this process's folder is in a repository; the workspace never is.
    return removeSection(prompt, '# Git Repository', { required: false });
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
}

interface MassSystemPromptOptions {
  model: string;
  /** The tools the main session declares to the model. */
  declaredTools: readonly string[];
  /** The harness runs in a sandbox (else qwen-code's "Outside of Sandbox" section is the truth and stays). */
  sandboxed: boolean;
}

/**
 * qwen-code's default prompt made true in mass: its sandbox section replaced with `SANDBOX_SECTION` when sandboxed,
 * its "New Applications" section (the `skill` tool's new-app skill) left out when no `skill` tool is declared, and its
 * "Interaction Details" (the `/help` and `/bug` commands of a person at the terminal) left out: no one is.
 */
export async function massSystemPrompt(options: MassSystemPromptOptions): Promise<string> {
  let prompt = await qwenCodeDefaultPrompt(options.model, options.declaredTools);
  if (options.sandboxed) prompt = replaceSection(prompt, '# Outside of Sandbox', SANDBOX_SECTION);
  if (!options.declaredTools.includes('skill')) prompt = removeSection(prompt, '## New Applications');
  return removeSection(prompt, '## Interaction Details');
}

export function sha256Text(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The section that starts at the line `heading` and runs to the next heading of its level or above. */
function sectionBounds(prompt: string, heading: string): { start: number; end: number } | null {
  const lines = prompt.split('\n');
  const startLine = lines.indexOf(heading);
  if (startLine === -1) return null;
  const level = heading.indexOf(' ');
  let endLine = lines.length;
  for (let index = startLine + 1; index < lines.length; index += 1) {
    const match = /^(#+) /.exec(lines[index]!);
    if (match && match[1]!.length <= level) {
      endLine = index;
      break;
    }
  }
  const offset = (line: number) => lines.slice(0, line).reduce((sum, text) => sum + text.length + 1, 0);
  return { start: offset(startLine), end: Math.min(prompt.length, offset(endLine)) };
}

function replaceSection(prompt: string, heading: string, replacement: string): string {
  const bounds = sectionBounds(prompt, heading);
  if (bounds === null) throw missingSection(heading);
  return `${prompt.slice(0, bounds.start)}${replacement}\n\n${prompt.slice(bounds.end).replace(/^\n+/, '')}`;
}

function removeSection(prompt: string, heading: string, { required = true } = {}): string {
  const bounds = sectionBounds(prompt, heading);
  if (bounds === null) {
    if (required) throw missingSection(heading);
    return prompt;
  }
  return `${prompt.slice(0, bounds.start)}${prompt.slice(bounds.end).replace(/^\n+/, '')}`;
}

function missingSection(heading: string): Error {
  return new Error(
    `qwen-code's default system prompt has no "${heading}" section: src/harness/system-prompt.ts is written for qwen-code ${QWEN_CODE_VERSION}; check what the installed version says and update it`,
  );
}
