import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BenchmarkSummaryRecord, type BenchmarkSummary } from '../../src/records/benchmark-records.js';
import { readEgressLog } from '../../src/proxy/egress-log.js';
import { readProxyLog } from '../../src/proxy/log-row.js';
import { readRunForReport } from '../../src/report/read-run.js';
import { benchmarkSection } from '../../src/report/sections/benchmark-section.js';
import { respond } from '../../src/view/respond.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { scriptedTeam } from '../../src/testing/scripted-team.js';
import { step } from '../../src/toy/steps.js';
import { runMass, startMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { seededRandom } from '../support/seeded-random.js';
import { startAnswerServer } from './answer-server.js';

const BUNDLED = fileURLToPath(new URL('../../benchmarks/mass-mini', import.meta.url));
const random = seededRandom('mass benchmark kill delay');

interface StepRow {
  key: string;
  status: string;
  attempts: number;
  finished_at: string | null;
}

/** A Harbor task folder written for a test: task.toml, instruction.md, tests/test.sh and any other files. */
function writeTask(root: string, name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  const all = {
    'task.toml':
      'version = "1.0"\n[verifier]\ntimeout_sec = 30.0\n[agent]\ntimeout_sec = 120.0\n[environment]\nallow_internet = false\n',
    'instruction.md': `# ${name}\n\nWrite the answer.\n`,
    ...files,
  };
  for (const [file, text] of Object.entries(all)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

const REWARD_IF_42 =
  'LOGS=${LOGS_DIR:-/logs/verifier}\nif [ "$(cat "$WORKSPACE/answer.txt" 2>/dev/null)" = "42" ]; then echo 1 > "$LOGS/reward.txt"; else echo 0 > "$LOGS/reward.txt"; fi\n';

describe('mass benchmark', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  const configFile = join(directory.path, 'bench.yaml');
  const runDirectory = join(runs, 'bench');
  const datasets = join(directory.path, 'datasets');
  let server: ScriptedServer;
  let team: ReturnType<typeof scriptedTeam>;

  const steps = (): StepRow[] => {
    const database = new Database(join(runDirectory, 'mass.db'), { readonly: true });
    try {
      return database.prepare('SELECT key, status, attempts, finished_at FROM steps').all() as StepRow[];
    } finally {
      database.close();
    }
  };
  const benchmark = (args: string[]) =>
    runMass(['benchmark', '--config', configFile, '--runs', runs, ...args]);
  /** The run configuration under another run name, with one more line. */
  const configVariant = (name: string, line: string): string => {
    const file = join(directory.path, `${name}.yaml`);
    writeFileSync(
      file,
      `${readFileSync(configFile, 'utf8').replace('name: bench', `name: ${name}`)}${line}\n`,
    );
    return file;
  };
  const summaryOf = (benchmark: string, agent: string): Promise<BenchmarkSummary> =>
    BenchmarkSummaryRecord.read(join(runDirectory, 'benchmarks', benchmark, `summary-${agent}.json`));

  beforeAll(async () => {
    // A scripted team: the orchestrator delegates; the subagent looks for the tests everywhere, then answers.
    team = scriptedTeam({
      orchestrator: [
        step.toolCall('agent', {
          description: 'solve',
          prompt: 'SOLVE: find the answer and write it to answer.txt',
          subagent_type: 'general-purpose',
          run_in_background: false,
        }),
        step.text('The answer is written.'),
      ],
      subagents: [
        {
          task: 'SOLVE:',
          steps: [
            step.toolCall('run_shell_command', {
              command: `(ls /tests /logs; find / -name test.sh -o -name solve.sh 2>/dev/null) > found.txt 2>&1; true`,
              description: 'look for the tests',
            }),
            step.toolCall('write_file', { file_path: '/workspace/answer.txt', content: '42' }),
            step.text('answer.txt holds 42.'),
          ],
        },
      ],
    });
    server = await startScriptedServer({ models: ['scripted'], responder: team.responder });
    writeFileSync(
      configFile,
      [
        'name: bench',
        `suite: ${fileURLToPath(new URL('../fixtures/tasks', import.meta.url))}`,
        `roles: { executor: { model: scripted, baseUrl: "${server.baseUrl}" } }`,
        'budgets: { episodeTimeoutSeconds: 150 }',
        'seed: 0',
        '',
      ].join('\n'),
    );
    const answer = join(datasets, 'answers');
    writeTask(answer, 'write-42', {
      'tests/test.sh': REWARD_IF_42,
      'tests/secret.txt': 'the tests are here',
      'solution/solve.sh': 'echo 42 > answer.txt\n',
    });
    const broken = join(datasets, 'verifiers');
    writeTask(broken, 'no-reward', { 'tests/test.sh': 'echo checked\nexit 0\n' });
    writeTask(broken, 'slow-verifier', {
      'task.toml': 'version = "1.0"\n[verifier]\ntimeout_sec = 2.0\n[environment]\nallow_internet = false\n',
      'tests/test.sh': 'sleep 60\n',
    });
    writeTask(broken, 'crashing-verifier', { 'tests/test.sh': 'echo broken >&2\nexit 3\n' });
    writeTask(broken, 'own-container', {
      'environment/Dockerfile': 'FROM ubuntu:24.04\nRUN apt-get update\n',
      'tests/test.sh': REWARD_IF_42,
      'solution/solve.sh': 'echo 42 > answer.txt\n',
    });
    writeTask(broken, 'wants-internet', {
      'task.toml': 'version = "1.0"\n',
      'tests/test.sh': REWARD_IF_42,
    });
    cpSync(join(answer, 'write-42'), join(datasets, 'malformed', 'bad-toml'), { recursive: true });
    writeFileSync(join(datasets, 'malformed', 'bad-toml', 'task.toml'), '[verifier]\ntimeout_sec = "soon"\n');
  });
  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  it("Harbor's sanity protocol on every bundled task: oracle 1, nop 0; killed and rerun, nothing finished is redone", async () => {
    const args = ['benchmark', '--config', configFile, '--runs', runs, '--tasks', BUNDLED];
    const delay = 4_000 + Math.floor(random() * 8_000);
    const { child, finished } = startMass([...args, '--agent', 'oracle']);
    await new Promise((resolve) => setTimeout(resolve, delay));
    child.kill('SIGKILL');
    await finished;
    const before = existsSync(join(runDirectory, 'mass.db'))
      ? steps().filter((row) => row.status === 'done')
      : [];
    const oracle = await runMass([...args, '--agent', 'oracle']);
    expect(oracle.code, `${oracle.stderr}\nkilled after ${delay} ms`).toBe(0);
    const after = steps();
    for (const row of before) expect(after.find((other) => other.key === row.key)).toEqual(row);
    const nop = await runMass([...args, '--agent', 'nop', '--json']);
    expect(nop.code, nop.stderr).toBe(0);

    const oracleSummary = await summaryOf('mass-mini', 'oracle');
    const nopSummary = await summaryOf('mass-mini', 'nop');
    expect(oracleSummary.tasks.length).toBeGreaterThanOrEqual(6);
    expect(oracleSummary.skipped).toEqual([]);
    for (const trial of oracleSummary.trials) {
      expect(trial.verification, trial.task).toMatchObject({ status: 'scored', reward: 1 });
    }
    for (const trial of nopSummary.trials) {
      expect(trial.verification, trial.task).toMatchObject({ status: 'scored', reward: 0 });
    }
    expect(oracleSummary.figures[0]).toMatchObject({ label: 'oracle', meanReward: 1, unscored: 0 });
    expect(JSON.parse(nop.stdout)).toEqual([nopSummary]);

    // Finished: run again, nothing new.
    const again = await runMass([...args, '--agent', 'oracle']);
    expect(again.code, again.stderr).toBe(0);
    expect(steps().filter((row) => row.key.includes('/oracle/'))).toEqual(
      after.filter((row) => row.key.includes('/oracle/')),
    );
  }, 600_000);

  it('a scripted team solves a task: the tests were nowhere to be seen, its reward and its output tokens are recorded', async () => {
    const result = await benchmark(['--tasks', join(datasets, 'answers'), '--skip-doctor']);
    expect(result.code, result.stderr).toBe(0);
    expect(team.problems).toEqual([]);
    const summary = await summaryOf('answers', 'team');
    const [trial] = summary.trials;
    expect(trial).toMatchObject({ label: 'base', agent: 'team', status: 'finished', delegations: 1 });
    expect(trial!.verification).toMatchObject({ status: 'scored', reward: 1, rewardFile: 'reward.txt' });
    const episode = join(runDirectory, trial!.dir);
    // What the subagent found looking for the tests: the empty mount points of the sandbox, never a test file.
    const found = readFileSync(join(episode, 'workspace', 'found.txt'), 'utf8');
    expect(found).not.toContain('test.sh');
    expect(found).not.toContain('solve.sh');
    expect(found).toMatch(/No such file or directory/);
    // The output tokens are the proxy log's, every thread counted.
    const rows = await readProxyLog(join(episode, 'requests.jsonl'));
    const tokens = rows.reduce(
      (sum, row) =>
        sum +
        (row.response?.kind === 'completion' ? (row.response.completion.usage?.completion_tokens ?? 0) : 0),
      0,
    );
    expect(tokens).toBeGreaterThan(0);
    expect(trial!.outputTokens).toBe(tokens);
    expect(summary.figures[0]).toMatchObject({ label: 'base', meanReward: 1, delegationRate: 1 });
    expect(summary.figures[0]!.rewardPerThousandTokens).toBeCloseTo(1000 / tokens, 9);
    expect(result.stdout).toContain('Benchmark answers');

    // The viewer's benchmark page links the trial to its episode page; the report has the section.
    const benchmarkPage = await respond(runDirectory, 'GET', '/benchmarks/answers/');
    expect(benchmarkPage.status).toBe(200);
    expect(String(benchmarkPage.body)).toContain(`href="/${trial!.dir}/"`);
    expect((await respond(runDirectory, 'GET', `/${trial!.dir}/`)).status).toBe(200);
    const section = String(await benchmarkSection(await readRunForReport(runDirectory)));
    expect(section).toContain('answers: agent team');
    expect(section).toContain('write-42');
  }, 300_000);

  it('a verifier without a reward, one past its timeout and one that crashes are recorded as such; tasks that cannot run are skipped with the reason', async () => {
    const result = await benchmark([
      '--tasks',
      join(datasets, 'verifiers'),
      '--agent',
      'nop',
      '--internet',
      'refuse',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const summary = await summaryOf('verifiers', 'nop');
    const verification = (task: string) => summary.trials.find((trial) => trial.task === task)!.verification;
    expect(verification('no-reward')).toMatchObject({ status: 'no-reward', reward: null, exitCode: 0 });
    expect(verification('no-reward').detail).toMatch(/neither .*reward.txt nor reward.json/);
    expect(verification('no-reward').stdoutTail).toBe('checked\n');
    expect(verification('slow-verifier')).toMatchObject({ status: 'timeout', reward: null });
    // A test.sh that fails before writing a reward is its set-up failing, recorded apart from a wrong answer (0).
    expect(verification('crashing-verifier')).toMatchObject({
      status: 'setup-failed',
      reward: null,
      exitCode: 3,
    });
    expect(verification('crashing-verifier').stderrTail).toBe('broken\n');
    expect(summary.figures[0]!.unscored).toBe(3);
    const skipped = Object.fromEntries(summary.skipped.map((entry) => [entry.task, entry.reason]));
    expect(Object.keys(skipped).sort()).toEqual(['own-container', 'wants-internet']);
    expect(skipped['own-container']).toMatch(
      /needs its own container \(an image built from environment\/Dockerfile\)/,
    );
    expect(skipped['wants-internet']).toMatch(/asks for the internet/);
    expect(result.stderr).toContain('skipped own-container');
  }, 300_000);

  it("an engine that cannot start the trial's container: the trial is recorded as failed, with the engine's words", async () => {
    // A stand-in engine that builds but refuses to create containers (the real engine's tests are
    // benchmark-containers.e2e.test.ts).
    const bin = join(directory.path, 'bin');
    const log = join(directory.path, 'engine.log');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'docker'),
      '#!/bin/sh\nprintf "%s\\n" "$*" >> "$FAKE_ENGINE_LOG"\n' +
        'case "$1" in create) echo "no space left on device" >&2; exit 1;; esac\n' +
        // A build writes its image's ID where --iidfile says, as the real engine does.
        'if [ "$1" = build ]; then while [ $# -gt 0 ]; do\n' +
        '  if [ "$1" = --iidfile ]; then printf "sha256:%064d" 0 > "$2"; fi; shift\ndone; fi\n',
      { mode: 0o755 },
    );
    const result = await runMass(
      [
        'benchmark',
        '--config',
        configFile,
        '--runs',
        runs,
        '--tasks',
        join(datasets, 'verifiers', 'own-container'),
        '--agent',
        'oracle',
        '--container-engine',
        'docker',
      ],
      { PATH: `${bin}:${process.env['PATH']}`, FAKE_ENGINE_LOG: log },
    );
    expect(result.code, result.stderr).toBe(0);
    const calls = readFileSync(log, 'utf8').trimEnd().split('\n');
    expect(calls.some((call) => call.startsWith('build '))).toBe(true);
    const create = calls.find((call) => call.startsWith('create '))!;
    expect(create).toMatch(
      /^create --name mass-trial-\S+ --label mass.trial=1 --label mass.run=\S+ --init --network none /,
    );
    // The run's own label, which benchmark-containers.e2e.test.ts filters the engine's containers by.
    expect(create).toContain(` --label mass.run=${runDirectory} `);
    expect(create).not.toMatch(/:rw/);
    // Nothing of the host covers a folder of the image's own system (a host Node in /usr/bin would hide the image's).
    const targets = [...create.matchAll(/--volume (\S+)/g)].map((match) => match[1]!.split(':')[1]!);
    for (const target of targets) {
      expect(target, target).not.toMatch(/^\/(?:usr|bin|sbin|lib|lib64|etc|opt|app|root|home)(?:\/|$)/);
    }
    const summary = await summaryOf('verifiers', 'oracle');
    expect(summary.skipped).toEqual([]);
    expect(summary.trials[0]).toMatchObject({ status: 'failed' });
    expect(summary.trials[0]!.verification).toMatchObject({
      status: 'crashed',
      detail: expect.stringContaining('no space left on device'),
    });
  }, 120_000);

  it("a task that leaves allow_internet out runs by default with every public host: the oracle's solve.sh and the verifier reach a server the run configuration opens, through the logged egress proxy", async () => {
    // The test's server is on the host's loopback: no task reaches it unless the run configuration opens it.
    const site = await startAnswerServer();
    const { port, requests } = site;
    try {
      const online = join(datasets, 'online');
      // curl leaves 127.0.0.1 to NO_PROXY; --noproxy '' sends it through the proxy as any other host.
      const fetch = (path: string) => `curl -s --noproxy '' --max-time 20 http://127.0.0.1:${port}${path}`;
      writeTask(online, 'fetch-answer', {
        'task.toml': 'version = "1.0"\n[verifier]\ntimeout_sec = 30.0\n',
        'solution/solve.sh': `${fetch('/answer')} > answer.txt\n`,
        'tests/test.sh': `LOGS=\${LOGS_DIR:-/logs/verifier}\nif [ "$(${fetch('/verify')})" = 42 ]; then ${REWARD_IF_42}else echo 0 > "$LOGS/reward.txt"; fi\n`,
      });
      const result = await runMass([
        'benchmark',
        '--config',
        configVariant('online', `network: { privateDestinations: ["127.0.0.1:${port}"] }`),
        '--runs',
        runs,
        '--tasks',
        online,
        '--agent',
        'oracle',
      ]);
      expect(result.code, result.stderr).toBe(0);
      const summary = await BenchmarkSummaryRecord.read(
        join(runs, 'online', 'benchmarks', 'online', 'summary-oracle.json'),
      );
      expect(summary.skipped).toEqual([]);
      const [trial] = summary.trials;
      expect(trial).toMatchObject({ task: 'fetch-answer', internet: 'public', status: 'finished' });
      expect(trial!.verification).toMatchObject({ status: 'scored', reward: 1 });
      expect(requests).toEqual(['/answer', '/verify']);
      const egress = async (folder: string) =>
        (await readEgressLog(join(runs, 'online', folder, 'egress.jsonl'))).rows.map((row) => [
          row.method,
          row.host,
          row.port,
          row.verdict,
          row.status,
        ]);
      expect(await egress(trial!.dir)).toEqual([['GET', '127.0.0.1', port, 'allowed', 200]]);
      expect(await egress('benchmarks/online/verifier/oracle-oracle-fetch-answer-0')).toEqual([
        ['GET', '127.0.0.1', port, 'allowed', 200],
      ]);
      expect(result.stderr).toContain(
        'internet public (every public host, through the egress proxy): fetch-answer',
      );
      expect(result.stdout).toContain('public (every public host, through the egress proxy): fetch-answer');
    } finally {
      await site.close();
    }
  }, 300_000);

  it("an unsandboxed run configuration is refused before anything runs: a trial's /tests, /logs/verifier and state paths would be the host's", async () => {
    const result = await runMass([
      'benchmark',
      '--config',
      configVariant('unsandboxed', 'sandbox: unsandboxed'),
      '--runs',
      runs,
      '--tasks',
      join(datasets, 'answers'),
      '--agent',
      'oracle',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('sandbox: unsandboxed, and answers/write-42 would run on the host');
    expect(result.stderr).toContain('set sandbox: bubblewrap');
    expect(existsSync(join(runs, 'unsandboxed', 'benchmarks'))).toBe(false);
  }, 120_000);

  it('a malformed task.toml is refused before anything runs, naming the file and the field', async () => {
    const result = await benchmark(['--tasks', join(datasets, 'malformed'), '--agent', 'nop']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(join(datasets, 'malformed', 'bad-toml', 'task.toml'));
    expect(result.stderr).toContain('verifier.timeout_sec');
  }, 120_000);
});
