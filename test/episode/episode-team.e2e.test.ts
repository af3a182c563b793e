import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runEpisode, type EpisodeResult } from '../../src/episode/run-episode.js';
import { Thread } from '../../src/records/threads.js';
import { HARNESS_NODE_FOLDER } from '../../src/harness/harness-node.js';
import { firstUserMessage, userPromptText, contentText } from '../../src/harness/qwen-code.js';
import { LEAN_DECLARED_TOOLS, LEAN_DISABLED_TOOLS, SHELL_TIMEOUTS } from '../../src/harness/qwen-settings.js';
import { SANDBOX_SECTION, sha256Text } from '../../src/harness/system-prompt.js';
import type { ChatMessage } from '../../src/model/types.js';
import { readEgressLog } from '../../src/proxy/egress-log.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { scriptedTeam } from '../../src/testing/scripted-team.js';
import { step } from '../../src/toy/steps.js';
import { startEchoServer } from '../proxy/egress-proxy-support.js';
import { readProxyLog, temporaryDirectory } from '../support/fixtures.js';

const fixtureTaskDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
// Outside /tmp (the sandbox has its own): a key file the configuration hides (`sandboxHide`).
const keyDirectory = fileURLToPath(
  new URL(`../../node_modules/.cache/mass-episode-key-${process.pid}`, import.meta.url),
);
const keyFile = join(keyDirectory, 'credentials');
/** A 16×16 PNG: what a subagent looks at when the model takes images. */
const PLOT_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAHUlEQVR42mP4z/AfK2LAhUY10EgDdoQTjGqghQYAMAL/AU4av8gAAAAASUVORK5CYII=';

describe('an episode: real qwen-code, sandboxed, a scripted team delegating to two subagents', () => {
  const directory = temporaryDirectory();
  const outDir = join(directory.path, 'episodes', 'e0');
  let server: ScriptedServer;
  let result: EpisodeResult;
  let team: ReturnType<typeof scriptedTeam>;
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  // The fixture task, allowing network to one port of the host's loopback, where the test's server listens (opened by
  // the episode's privateDestinations, as a run configuration would).
  const taskDir = join(directory.path, 'tasks', 'tiny-sum');

  beforeAll(async () => {
    echo = await startEchoServer();
    cpSync(fixtureTaskDir, taskDir, { recursive: true });
    appendFileSync(
      join(taskDir, 'task.yaml'),
      `environment:\n  network: { allow: ['127.0.0.1:${echo.port}'] }\n`,
    );
    // The agents see the workspace at /workspace, wherever the episode directory is.
    const workspace = '/workspace';
    team = scriptedTeam({
      orchestrator: [
        step.toolCall(
          'agent',
          {
            description: 'compute',
            prompt: 'COMPUTE: run simulate.py and write results/metrics.json',
            subagent_type: 'general-purpose',
            run_in_background: false,
          },
          { reasoning: 'First the computation.' },
        ),
        step.toolCall(
          'agent',
          {
            description: 'check',
            prompt: 'CHECK: verify results/metrics.json against simulate.py',
            subagent_type: 'general-purpose',
            run_in_background: false,
          },
          { reasoning: 'Now the check.' },
        ),
        step.text('Done: total = 10, checked.', { reasoning: 'Both reports agree.' }),
      ],
      subagents: [
        {
          task: 'COMPUTE:',
          steps: [
            step.toolCall('run_shell_command', {
              command:
                `pwd; echo "home=$HOME"; echo "root=$(ls -A /root | wc -l)"; echo "key=$(cat ${keyFile})"; ` +
                // The harness's Node (this shell's parent: its /proc/<pid>/exe is closed to agent code, its command
                // line is not), and whether agent code could write its compile cache.
                `echo "harness-node=$(tr '\\0' '\\n' < /proc/$PPID/cmdline | head -1)"; ` +
                `echo "exe=$(readlink /proc/$PPID/exe || echo closed)"; echo "cache-dir=$NODE_COMPILE_CACHE"; ` +
                `touch "$NODE_COMPILE_CACHE/tampered" 2>/dev/null && echo cache=writable || echo cache=read-only; ` +
                // Node reads the cache folders named after the reading uid: the sandbox's must be there, readable.
                `echo "cache-readable=$(find "$NODE_COMPILE_CACHE" -path "*-$(id -u)/*" -type f -readable | wc -l)"; ` +
                `cf=$(find "$NODE_COMPILE_CACHE" -path "*-$(id -u)/*" -type f | head -1); ` +
                `echo x >> "$cf" 2>/dev/null && echo cache-file=writable || echo cache-file=read-only; ` +
                // The warm run's schema answers: read by the harness, not writable, their variable not passed on.
                `sc="$NODE_COMPILE_CACHE/schema-checks.json"; test -r "$sc" && echo schema-checks=readable; ` +
                `echo x >> "$sc" 2>/dev/null && echo schema-checks=writable || echo schema-checks=read-only; ` +
                `echo "schema-checks-variable=\${MASS_SCHEMA_CHECKS:-unset}"; ` +
                // The task's one allowed host and port, through the egress proxy, and another port, refused.
                `echo "egress=$(curl -s --noproxy '' --max-time 10 http://127.0.0.1:${echo.port}/from-agent)"; ` +
                `echo "refused=$(curl -s --noproxy '' --max-time 10 -o /dev/null -w '%{http_code}' http://127.0.0.1:1/)"`,
              description: 'where am I',
            }),
            step.toolCall(
              'run_shell_command',
              { command: 'python3 simulate.py', description: 'sum' },
              { reasoning: 'Run it.' },
            ),
            step.toolCall('write_file', {
              file_path: `${workspace}/results/metrics.json`,
              content: '{"total": 10}\n',
            }),
            step.text('total = 10, written to results/metrics.json'),
          ],
        },
        {
          task: 'CHECK:',
          steps: [
            step.toolCall('run_shell_command', {
              command:
                `python3 -c "import json; assert json.load(open('results/metrics.json'))['total'] == 10; print('ok')"; ` +
                `echo ${PLOT_PNG} | base64 -d > plot.png`,
              description: 'check',
            }),
            // The served model takes images (the endpoint's `images`): the harness returns the plot to it.
            step.toolCall('read_file', { file_path: `${workspace}/plot.png` }),
            step.text('approved: true'),
          ],
        },
      ],
    });
    mkdirSync(keyDirectory, { recursive: true });
    writeFileSync(keyFile, 'sk-host-KEY-11');
    server = await startScriptedServer({ responder: team.responder, models: ['team-model'] });
    const task = await loadTask(taskDir);
    result = await runEpisode({
      taskDir,
      workflow: task.manifest.workflow,
      teacher: true,
      model: 'team-model',
      baseUrl: server.baseUrl,
      apiKey: 'sk-upstream-SECRET-7',
      seed: 3,
      outDir,
      timeoutSeconds: 120,
      sandboxHide: [keyFile],
      // The run configuration opens the test's server on the host's loopback; the task's listing alone would not.
      privateDestinations: [`127.0.0.1:${echo.port}`],
      images: true,
    });
  }, 120_000);

  afterAll(async () => {
    await server.close();
    await echo.close();
    directory.remove();
    rmSync(keyDirectory, { recursive: true, force: true });
  });

  it('succeeds, and the workspace holds what the team wrote', () => {
    expect(team.problems).toEqual([]);
    expect(result.ran).toBe(true);
    expect(result.record.failure).toBeNull();
    expect(result.record.status).toBe('success');
    expect(JSON.parse(readFileSync(join(outDir, 'workspace', 'results', 'metrics.json'), 'utf8'))).toEqual({
      total: 10,
    });
    expect(result.record.sandbox).toMatchObject({ enabled: true, exitCode: 0, limitExceeded: null });
  });

  it('records one orchestrator and two subagent threads with their tool calls and results', () => {
    const threads = readFileSync(join(outDir, 'threads.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => Thread.parse(JSON.parse(line)));
    expect(threads.map((thread) => thread.role)).toEqual(['orchestrator', 'subagent', 'subagent']);
    const toolNames = (thread: Thread) =>
      thread.segments
        .flatMap((segment) =>
          segment.messages.flatMap((message) =>
            message.role === 'assistant' ? (message.tool_calls ?? []) : [],
          ),
        )
        .map((call) => call.function.name);
    expect(toolNames(threads[0]!)).toEqual(['agent', 'agent']);
    expect(toolNames(threads[1]!)).toEqual(['run_shell_command', 'run_shell_command', 'write_file']);
    const [whereResult, shellResult] = threads[1]!.segments[0]!.messages.filter(
      (message) => message.role === 'tool',
    );
    expect(JSON.stringify(shellResult?.content)).toContain('10');
    // The agents work in /workspace with HOME /home/agent, see nothing of the host's /root, nor the hidden key.
    const where = JSON.stringify(whereResult?.content);
    for (const line of ['/workspace', 'home=/home/agent', 'root=0', 'key=']) expect(where).toContain(line);
    expect(where).not.toContain('KEY-11');
    expect(result.record.sandbox).toMatchObject({ workspacePath: '/workspace', homePath: '/home/agent' });
    // Nothing the model was sent names the episode's host directory.
    expect(readFileSync(join(outDir, 'requests.jsonl'), 'utf8')).not.toContain(directory.path);
    expect(
      JSON.stringify(threads[2]!.segments[0]!.messages.filter((message) => message.role === 'tool')),
    ).toContain('ok');
  });

  it('runs the lean harness on its own Node 22 with a read-only compile cache, offering no removed tool or skill', () => {
    const requests = readProxyLog(join(outDir, 'requests.jsonl')).map(
      (row) => row.request as { messages: ChatMessage[]; tools?: Array<{ function: { name: string } }> },
    );
    const offered = new Set(
      requests.flatMap((request) => (request.tools ?? []).map((tool) => tool.function.name)),
    );
    for (const kept of [
      'agent',
      'run_shell_command',
      'read_file',
      'write_file',
      'edit',
      'glob',
      'grep_search',
    ])
      expect(offered).toContain(kept);
    for (const removed of LEAN_DISABLED_TOOLS) expect(offered).not.toContain(removed);
    for (const { messages } of requests) {
      const firstUser = contentText(firstUserMessage(messages)!.content);
      expect(firstUser).not.toContain('<available_skills>');
      for (const removed of ['web_fetch', 'monitor', 'loop_wakeup', 'zoom_image'])
        expect(firstUser).not.toContain(`"${removed}"`);
      expect(userPromptText(firstUserMessage(messages)!.content ?? '').length).toBeGreaterThan(0);
    }
    expect(result.record.harness.profile).toBe('lean');
    const where = readFileSync(join(outDir, 'requests.jsonl'), 'utf8');
    if (process.platform === 'linux' && process.arch === 'x64') {
      // scripts/install.sh installs it; the harness runs from its run-only copy, never from this process's Node.
      expect(result.record.harness.nodeVersion).toMatch(/^22\./);
      const node = join(HARNESS_NODE_FOLDER, 'guarded', `node-${result.record.harness.nodeVersion}`);
      expect(where).toContain(`harness-node=${node}`);
      expect(where).toContain('exe=closed');
      const cache = join(HARNESS_NODE_FOLDER, 'compile-cache');
      expect(where).toContain(`cache-dir=${cache}`);
      expect(where).toContain('cache=read-only');
      expect(Number(/cache-readable=(\d+)/.exec(where)?.[1])).toBeGreaterThan(100);
      // Agent code cannot change a cached module the next episode's harness would run.
      expect(where).toContain('cache-file=read-only');
      expect(where).toContain('schema-checks=readable');
      expect(where).toContain('schema-checks=read-only');
      expect(where).toContain('schema-checks-variable=unset');
      expect(existsSync(join(cache, 'tampered'))).toBe(false);
    }
    expect(readFileSync(join(outDir, 'harness-stderr.log'), 'utf8')).not.toMatch(/compile.cache|EROFS/i);
  });

  it('tells the model the truth: a sandbox, no skill, only subagent types that work, a valid schema for every tool, the shell limits that hold', () => {
    interface OfferedTool {
      function: { name: string; description: string; parameters?: Record<string, unknown> };
    }
    const [first] = readProxyLog(join(outDir, 'requests.jsonl')).map(
      (row) => row.request as { messages: ChatMessage[]; tools: OfferedTool[] },
    );
    const system = contentText(first!.messages[0]!.content);
    expect(system).toMatch(/^You are Qwen Code/);
    expect(system).not.toContain('Outside of Sandbox');
    expect(system).toContain(SANDBOX_SECTION);
    expect(system).not.toMatch(/skill/i);
    // qwen-code's own QWEN_SYSTEM_MD, as episode.json records it.
    const file = readFileSync(join(outDir, 'home', 'system.md'), 'utf8');
    expect(system.startsWith(file)).toBe(true);
    expect(result.record.harness.texts).toMatchObject({
      systemPromptSha256: sha256Text(file),
      sandboxMarker: 'mass',
      shellTimeoutMs: { default: SHELL_TIMEOUTS.defaultMs, max: SHELL_TIMEOUTS.maxMs },
      images: true,
    });

    const tools = new Map(first!.tools.map((tool) => [tool.function.name, tool.function]));
    // What the prompt was built for is what the harness declared.
    expect([...tools.keys()].sort()).toEqual([...LEAN_DECLARED_TOOLS].sort());
    for (const tool of tools.values()) {
      expect(tool.description.length).toBeGreaterThan(0);
      // A JSON schema of an object whose required names are its properties; none at all is OpenAI's empty argument
      // list (qwen-code sends list_agents so).
      if (tool.parameters === undefined) continue;
      expect(tool.parameters.type).toBe('object');
      const properties = tool.parameters.properties as Record<string, unknown>;
      expect(typeof properties).toBe('object');
      for (const name of (tool.parameters.required as string[] | undefined) ?? [])
        expect(Object.keys(properties)).toContain(name);
    }
    // The shell's limits as its description states them hold: its default is configured to match.
    const shell = tools.get('run_shell_command')!;
    expect(shell.description).toContain(`up to ${SHELL_TIMEOUTS.maxMs}ms`);
    expect(shell.description).toContain(`commands will timeout after ${SHELL_TIMEOUTS.defaultMs}ms`);
    expect((shell.parameters!.properties as { timeout: { maximum: number } }).timeout.maximum).toBe(
      SHELL_TIMEOUTS.maxMs,
    );
    const settings = JSON.parse(readFileSync(join(outDir, 'home', 'settings.json'), 'utf8')) as {
      tools: { shell: { defaultTimeoutMs: number } };
    };
    expect(settings.tools.shell.defaultTimeoutMs).toBe(SHELL_TIMEOUTS.defaultMs);
    // The subagent type the team uses is offered; none that starts an outside program, nor a parameter that needs a
    // git repository (the workspace is none).
    const agent = tools.get('agent')!;
    expect(agent.description).toContain('- **general-purpose**:');
    expect(agent.description).not.toMatch(/\*\*(claude-code|codex)\*\*/);
    expect(agent.description).not.toMatch(/worktree|working_dir/);
    const parameters = Object.keys(agent.parameters!.properties as object);
    expect(parameters).toContain('subagent_type');
    expect(parameters).not.toContain('isolation');
    expect(parameters).not.toContain('working_dir');
    expect(result.record.harness.texts?.agentTool).toEqual({
      removedTypes: ['claude-code', 'codex'],
      removedParameters: ['isolation', 'working_dir'],
    });
  });

  it('returns a plot to a model that takes images', () => {
    const requests = readProxyLog(join(outDir, 'requests.jsonl')).map(
      (row) => row.request as { messages: ChatMessage[] },
    );
    const last = requests.filter((request) => JSON.stringify(request.messages).includes('plot.png')).pop()!;
    const parts = last.messages.flatMap((message) => (Array.isArray(message.content) ? message.content : []));
    expect(parts.some((part) => (part as { type?: string }).type === 'image_url')).toBe(true);
    expect(JSON.stringify(last.messages)).not.toContain('does not support image input');
  });

  it('lets the agents reach the task’s allowed host through the egress proxy, logged and counted in episode.json', async () => {
    const where = readFileSync(join(outDir, 'requests.jsonl'), 'utf8');
    expect(where).toContain('egress=echo GET /from-agent 0 bytes');
    expect(where).toContain('refused=403');
    expect(readFileSync(join(outDir, 'prompt.md'), 'utf8')).toContain(
      `Network access only to \`127.0.0.1:${echo.port}\``,
    );
    const { rows } = await readEgressLog(join(outDir, 'egress.jsonl'));
    expect(rows.map((row) => [row.method, row.port, row.verdict])).toEqual([
      ['GET', echo.port, 'allowed'],
      ['GET', 1, 'refused'],
    ]);
    expect(result.record.egress).toEqual({
      allow: [`127.0.0.1:${echo.port}`],
      requestsAllowed: 1,
      requestsRefused: 1,
      bytesUp: 0,
      bytesDown: 'echo GET /from-agent 0 bytes\n'.length,
      unloggedRequests: 0,
    });
  });

  it('writes a record whose usage adds up to the proxy log', () => {
    const rows = readProxyLog(join(outDir, 'requests.jsonl'));
    const completion = rows.reduce(
      (sum, row) =>
        sum +
        (row.response?.kind === 'completion' ? (row.response.completion.usage?.completion_tokens ?? 0) : 0),
      0,
    );
    const { record } = result;
    expect(record.modelCalls).toBe(rows.length);
    expect(record.modelCalls).toBe(10);
    expect(record.failedModelCalls).toBe(0);
    expect(record.delegations).toBe(2);
    expect(record.usage.total.completionTokens).toBe(completion);
    expect(record.usage.perThread.map((thread) => thread.calls)).toEqual([3, 4, 3]);
    expect(record.integrity).toMatchObject({ tampered: false, tamperedPaths: [] });
    expect(record.integrity.assets.map((asset) => asset.path)).toEqual(['simulate.py']);
    expect(record.workflowHash).toMatch(/^[0-9a-f]{16}$/);
  });

  it('sends the workflow and the teacher directive, and keeps the upstream key out of the sandbox and the files', () => {
    const prompt = readFileSync(join(outDir, 'prompt.md'), 'utf8');
    expect(prompt).toContain('## Team workflow');
    expect(prompt).toContain('run_in_background: false');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-upstream-SECRET-7');
    for (const file of [
      'requests.jsonl',
      'events.jsonl',
      'episode.json',
      'threads.jsonl',
      'home/settings.json',
    ]) {
      expect(readFileSync(join(outDir, file), 'utf8')).not.toContain('SECRET-7');
    }
  });

  it('does nothing when run again on the finished directory', async () => {
    const again = await runEpisode({
      taskDir,
      workflow: (await loadTask(taskDir)).manifest.workflow,
      teacher: true,
      model: 'team-model',
      baseUrl: server.baseUrl,
      seed: 3,
      outDir,
    });
    expect(again.ran).toBe(false);
    expect(again.record).toEqual(result.record);
    await expect(
      runEpisode({ taskDir, model: 'team-model', baseUrl: server.baseUrl, seed: 4, outDir }),
    ).rejects.toThrow(/holds a finished episode with sampling seed 3, not 4, data seed 3, not 4/);
    expect(existsSync(join(outDir, 'workspace', 'results', 'metrics.json'))).toBe(true);
  });
});
