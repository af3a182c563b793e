import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BenchmarkSummaryRecord, type BenchmarkSummary } from '../../src/records/benchmark-records.js';
import { readEgressLog } from '../../src/proxy/egress-log.js';
import { readProxyLog } from '../../src/proxy/log-row.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { scriptedTeam } from '../../src/testing/scripted-team.js';
import { step } from '../../src/toy/steps.js';
import { runMass, startMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { seededRandom } from '../support/seeded-random.js';
import { startAnswerServer } from './answer-server.js';

const BUNDLED = fileURLToPath(new URL('../../benchmarks/mass-containers', import.meta.url));
const BASE_IMAGE = 'mass-bench/debian:bookworm';
const random = seededRandom('mass benchmark containers kill delay');

/** Why the container tests cannot run here, or null: a daemon must answer and the bundled images exist. */
function engineMissing(): string | null {
  try {
    execFileSync('docker', ['image', 'inspect', BASE_IMAGE, 'mass-bench/pinned-python:1'], {
      stdio: 'ignore',
    });
    return null;
  } catch {
    return 'no docker daemon answers, or the bundled images are missing: run `bash scripts/install-container-engine.sh` (CI does)';
  }
}
const missing = engineMissing();
if (missing) console.warn(`benchmark-containers.e2e: skipped: ${missing}`);

interface StepRow {
  key: string;
  status: string;
  attempts: number;
  finished_at: string | null;
}

/** Every file under `root` whose set-user-ID or set-group-ID bit is set (links not followed). */
function setIdFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      const stats = lstatSync(path);
      if (stats.isDirectory()) walk(path);
      else if ((stats.mode & 0o6000) !== 0) found.push(path);
    }
  };
  walk(root);
  return found;
}

describe.skipIf(missing !== null)('mass benchmark in a real container engine', () => {
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
  const summaryOf = (benchmark: string, agent: string): Promise<BenchmarkSummary> =>
    BenchmarkSummaryRecord.read(join(runDirectory, 'benchmarks', benchmark, `summary-${agent}.json`));
  const containers = () =>
    // This run's containers only: another run on the same engine (a developer's) is not this test's.
    execFileSync('docker', ['ps', '--all', '--quiet', '--filter', `label=mass.run=${runDirectory}`], {
      encoding: 'utf8',
    }).trim();

  beforeAll(async () => {
    // The subagent answers, then leaves a set-user-ID copy of bash in the working folder and in /tmp.
    team = scriptedTeam({
      orchestrator: [
        step.toolCall('agent', {
          description: 'solve',
          prompt: 'SOLVE: write the answer to /app/answer.txt',
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
              // The host's Node must not show inside: its folder (/usr/bin, say) would cover the image's own.
              command: `pwd > where.txt; id -u >> where.txt; test -e ${process.execPath} && echo host-node >> where.txt; cp /bin/bash rootbash && chmod 4755 rootbash`,
              description: 'leave a set-user-ID shell',
            }),
            step.toolCall('write_file', { file_path: '/app/answer.txt', content: '42' }),
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
    const task = join(datasets, 'answers', 'answer-in-app');
    const files: Record<string, string> = {
      'task.toml':
        'version = "1.0"\n[verifier]\ntimeout_sec = 30.0\n[agent]\ntimeout_sec = 120.0\n[environment]\nallow_internet = false\n',
      'instruction.md': 'Write 42 to /app/answer.txt.\n',
      'environment/Dockerfile': `FROM ${BASE_IMAGE}\nRUN mkdir -p /app\nWORKDIR /app\n`,
      // The verifier, as root, also leaves a set-user-ID shell among the logs that come back.
      'tests/test.sh':
        'cp /bin/bash /logs/verifier/rootbash && chmod 4755 /logs/verifier/rootbash\n' +
        'if [ "$(cat /app/answer.txt)" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
      'solution/solve.sh':
        'echo 42 > /app/answer.txt\ncp /bin/bash /app/rootbash && chmod 4755 /app/rootbash\n',
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(task, file, '..'), { recursive: true });
      writeFileSync(join(task, file), text);
    }
  });
  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  it('every bundled task in its back-end: oracle 1, nop 0; killed and rerun, nothing finished is redone, no container left', async () => {
    const args = ['benchmark', '--config', configFile, '--runs', runs, '--tasks', BUNDLED];
    const engine = ['--container-engine', 'docker'];
    const delay = 8_000 + Math.floor(random() * 15_000);
    const { child, finished } = startMass([...args, ...engine, '--agent', 'oracle']);
    await new Promise((resolve) => setTimeout(resolve, delay));
    child.kill('SIGKILL');
    await finished;
    const before = existsSync(join(runDirectory, 'mass.db'))
      ? steps().filter((row) => row.status === 'done')
      : [];
    const oracle = await runMass([...args, ...engine, '--agent', 'oracle']);
    expect(oracle.code, `${oracle.stderr}\nkilled after ${delay} ms`).toBe(0);
    const after = steps();
    for (const row of before) expect(after.find((other) => other.key === row.key)).toEqual(row);
    const nop = await runMass([...args, ...engine, '--agent', 'nop']);
    expect(nop.code, nop.stderr).toBe(0);

    const oracleSummary = await summaryOf('mass-containers', 'oracle');
    const nopSummary = await summaryOf('mass-containers', 'nop');
    expect(oracleSummary.skipped).toEqual([]);
    expect(oracleSummary.tasks).toHaveLength(5);
    for (const trial of oracleSummary.trials) {
      expect(trial.verification, verificationStory(trial)).toMatchObject({
        status: 'scored',
        reward: 1,
      });
    }
    for (const trial of nopSummary.trials) {
      expect(trial.verification, verificationStory(trial)).toMatchObject({
        status: 'scored',
        reward: 0,
      });
    }
    expect(containers()).toBe('');
    // The build-only file the Dockerfile deletes never reached the agent's side.
    const workspace = join(
      runDirectory,
      'benchmarks/mass-containers/trials/oracle-oracle-count-log-errors-0/workspace',
    );
    expect(readdirSync(workspace).sort()).toEqual(['error-count.txt', 'service.log']);

    const again = await runMass([...args, ...engine, '--agent', 'oracle']);
    expect(again.code, again.stderr).toBe(0);
    expect(steps().filter((row) => row.key.includes('/oracle/'))).toEqual(
      after.filter((row) => row.key.includes('/oracle/')),
    );
  }, 900_000);

  it('a container task that leaves allow_internet out: its solve.sh and test.sh reach a server the run configuration opens, through the egress proxy, logged', async () => {
    const site = await startAnswerServer();
    const { port, requests } = site;
    try {
      // The image has no HTTP client: bash asks the proxy that HTTP_PROXY names, as a client would.
      const fetch = (path: string) =>
        `p=\${HTTP_PROXY#http://}; exec 3<>/dev/tcp/\${p%:*}/\${p##*:}; ` +
        `printf 'GET http://127.0.0.1:${port}${path} HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\nConnection: close\\r\\n\\r\\n' >&3; ` +
        'tail -n 1 <&3';
      const task = join(datasets, 'online', 'fetch-in-container');
      const files: Record<string, string> = {
        'task.toml':
          'version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n[environment]\ndocker_image = "mass-bench/pinned-python:1"\n',
        'instruction.md': 'Fetch the answer.\n',
        'solution/solve.sh': `(${fetch('/answer')}) > /tmp/answer.txt\n`,
        'tests/test.sh': `if [ "$(cat /tmp/answer.txt)" = 42 ] && [ "$(${fetch('/verify')})" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n`,
      };
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(join(task, file, '..'), { recursive: true });
        writeFileSync(join(task, file), text);
      }
      const config = join(directory.path, 'online.yaml');
      writeFileSync(
        config,
        readFileSync(configFile, 'utf8').replace('name: bench', 'name: online') +
          `network: { privateDestinations: ["127.0.0.1:${port}"] }\n`,
      );
      const result = await runMass([
        'benchmark',
        '--config',
        config,
        '--runs',
        runs,
        '--tasks',
        join(datasets, 'online'),
        '--container-engine',
        'docker',
        '--agent',
        'oracle',
      ]);
      expect(result.code, result.stderr).toBe(0);
      const summary = await BenchmarkSummaryRecord.read(
        join(runs, 'online', 'benchmarks', 'online', 'summary-oracle.json'),
      );
      const [trial] = summary.trials;
      expect(trial, `${trial!.failure}`).toMatchObject({
        task: 'fetch-in-container',
        internet: 'public',
        status: 'finished',
      });
      expect(trial!.verification, trial!.verification.stderrTail).toMatchObject({
        status: 'scored',
        reward: 1,
      });
      expect(requests).toEqual(['/answer', '/verify']);
      for (const folder of [trial!.dir, 'benchmarks/online/verifier/oracle-oracle-fetch-in-container-0']) {
        const { rows } = await readEgressLog(join(runs, 'online', folder, 'egress.jsonl'));
        expect(rows.map((row) => [row.method, row.host, row.port, row.verdict, row.status])).toEqual([
          ['GET', '127.0.0.1', port, 'allowed', 200],
        ]);
      }
      expect(containers()).toBe('');
    } finally {
      await site.close();
    }
  }, 300_000);

  it('a scripted team in a container reaches the model through its proxy and is verified; no set-user-ID file comes back', async () => {
    const tasks = ['--tasks', join(datasets, 'answers'), '--container-engine', 'docker'];
    const base = ['benchmark', '--config', configFile, '--runs', runs, ...tasks];
    const result = await runMass([...base, '--skip-doctor']);
    expect(result.code, result.stderr).toBe(0);
    expect(team.problems).toEqual([]);
    const [trial] = (await summaryOf('answers', 'team')).trials;
    expect(trial).toMatchObject({ agent: 'team', status: 'finished', delegations: 1 });
    expect(trial!.verification).toMatchObject({ status: 'scored', reward: 1 });
    const episode = join(runDirectory, trial!.dir);
    const rows = await readProxyLog(join(episode, 'requests.jsonl'));
    expect(rows.length).toBeGreaterThan(0);
    expect(trial!.outputTokens).toBeGreaterThan(0);
    // The harness worked at the image's WORKDIR, as the image's user (root inside), and saw no host Node.
    expect(readFileSync(join(episode, 'workspace', 'where.txt'), 'utf8')).toBe('/app\n0\n');

    const oracle = await runMass([...base, '--agent', 'oracle']);
    expect(oracle.code, oracle.stderr).toBe(0);
    // The agent's, the oracle's and the verifier's set-user-ID shells came back as plain files.
    expect(existsSync(join(episode, 'workspace', 'rootbash'))).toBe(true);
    const logs = join(runDirectory, 'benchmarks/answers/verifier/team-base-answer-in-app-0/logs');
    expect(existsSync(join(logs, 'rootbash'))).toBe(true);
    expect(setIdFiles(runDirectory)).toEqual([]);
    expect(containers()).toBe('');
  }, 600_000);

  it('a task pinned to a base image no registry here serves is skipped, saying to load that image; nothing ran: exit 1', async () => {
    const base = 'registry.invalid/mass/base:1';
    const task = join(directory.path, 'unpullable', 'pinned-elsewhere');
    const files: Record<string, string> = {
      'task.toml': 'version = "1.0"\n[environment]\nallow_internet = false\n',
      'instruction.md': 'Write 42 to /app/answer.txt.\n',
      'environment/Dockerfile': `FROM ${base}\nWORKDIR /app\n`,
      'tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
      'solution/solve.sh': 'echo 42 > /app/answer.txt\n',
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(task, file, '..'), { recursive: true });
      writeFileSync(join(task, file), text);
    }
    const result = await runMass([
      'benchmark',
      '--config',
      configFile,
      '--runs',
      runs,
      '--tasks',
      join(directory.path, 'unpullable'),
      '--container-engine',
      'docker',
      '--agent',
      'nop',
    ]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toContain('No trial ran.');
    expect(result.stdout).toContain(
      `the base image ${base} is not in the engine, and the engine could not pull it`,
    );
    expect(result.stdout).not.toContain('MASS_BUILD_NETWORK');
    expect(result.stdout).not.toContain('Sending build context');
    expect(result.stderr).toContain('mass benchmark: no task could be run');
    // No plan of time and disk for trials that will not run.
    expect(result.stderr).toContain('unpullable: no trial to run: every task is skipped (below)');
    expect(result.stderr).not.toContain('at once');
    expect(containers()).toBe('');
  }, 300_000);
});

/** What a reader needs when a trial's verification is not what a test expects: the trial's failure and test.sh's own words. */
function verificationStory(trial: BenchmarkSummary['trials'][number]): string {
  const { detail, exitCode, stdoutTail, stderrTail } = trial.verification;
  return [
    `${trial.task}: trial ${trial.failure ?? 'finished'}`,
    `verifier exit ${exitCode}: ${detail ?? ''}`,
    `stdout: ${stdoutTail}`,
    `stderr: ${stderrTail}`,
  ].join('\n');
}
