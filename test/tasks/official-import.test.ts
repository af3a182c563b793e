import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { episodePrompt } from '../../src/episode/prompt.js';
import { loadSuite } from '../../src/tasks/index.js';
import { importOfficialTasks } from '../../src/tasks/official/import-official.js';
import { namedDeliverables } from '../../src/tasks/official/named-deliverables.js';
import { namedHosts } from '../../src/tasks/official/named-hosts.js';
import { teamText } from '../../src/tasks/official/team-text.js';

const checkout = fileURLToPath(new URL('../fixtures/official-checkout', import.meta.url));

async function freshDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'mass-import-'));
}

describe('the team text of an official initial file', () => {
  const closing = 'Use uv for everything. Keep a logs.txt file.';
  const task = 'Build a model.\\n\\nDeliverables:\\n1) research_report.md';
  const bare = `${task}\n\n${closing}`;

  it('is what the file adds to the bare query: the shared opening and the recurring closing lines are cut', () => {
    const initial = `${task}\n\nCreate an agent team with these agents:\n[{"agent_id": "a"}]\n\n${closing}\nIn logs.txt, list the agents.`;
    const team = teamText(bare, initial);
    expect(team).toEqual({
      text: 'Create an agent team with these agents:\n[{"agent_id": "a"}]\n\nIn logs.txt, list the agents.',
      opensWithTask: true,
    });
    // The episode prompt (bare query, then team) says the closing lines once.
    const prompt = episodePrompt({ task: bare, workflow: team.text });
    expect(prompt.split(closing)).toHaveLength(2);
  });

  it('cuts the shared opening back to a line start, so that no word is split', () => {
    const opening = 'Study whether the learned heuristic beats the baseline.';
    const team = teamText(`${opening}\nUse the data.`, `${opening}\nUse this team: two agents.`);
    expect(team.text).toBe('Use this team: two agents.');
  });

  it('is the whole file when the file does not open with the query', () => {
    const team = teamText(bare, 'A team of three agents.\n');
    expect(team).toEqual({ text: 'A team of three agents.', opensWithTask: false });
  });
});

describe('the hosts an official task names', () => {
  it('takes URL hosts, bare domains, named data services and the package index', () => {
    const hosts = namedHosts(
      'Use FRED and Yahoo Finance; see https://Movingai.com/benchmarks/grids.html and investing.com.\\n' +
        'A local mirror at http://data.example.org:8080/x. Install with uv add. Write research_report.md and results/metrics.json.',
    );
    expect(hosts.leftOut).toEqual([]);
    expect(hosts.allow).toEqual([
      'api.stlouisfed.org',
      'data.example.org:8080',
      'fc.yahoo.com',
      'files.pythonhosted.org',
      'finance.yahoo.com',
      'fred.stlouisfed.org',
      'investing.com',
      'movingai.com',
      'pypi.org',
      'query1.finance.yahoo.com',
      'query2.finance.yahoo.com',
    ]);
  });

  it('is empty for a task that names none', () => {
    expect(namedHosts('Simulate a pendulum; write research_report.md.')).toEqual({ allow: [], leftOut: [] });
  });

  it('leaves out IP addresses in any spelling and names for local use, and says why', () => {
    const hosts = namedHosts(
      'Cache results in Redis at http://127.0.0.1:6379/ and call the model at 10.0.0.5:8000.\\n' +
        'Credentials: 169.254.169.254 or http://metadata.google.internal/computeMetadata/v1/. ' +
        'Also http://[::1]:8080/, http://0x7f.1/, http://2130706433/, http://[::ffff:127.0.0.1]/, localhost:3000, ' +
        'printer.local, http://8.8.8.8/ and the real https://data.example.org/x.',
    );
    expect(hosts.allow).toEqual(['data.example.org']);
    expect(Object.fromEntries(hosts.leftOut.map(({ entry, why }) => [entry, why]))).toEqual({
      '127.0.0.1:6379': 'a loopback address (127.0.0.0/8)',
      '10.0.0.5:8000': 'a private address (10.0.0.0/8)',
      '169.254.169.254': 'a cloud metadata address (169.254.169.254/32)',
      'metadata.google.internal': 'a cloud metadata name (metadata.google.internal)',
      '[::1]:8080': 'the loopback address (::1)',
      '0x7f.1': 'a loopback address (127.0.0.0/8)',
      '2130706433': 'a loopback address (127.0.0.0/8)',
      '[::ffff:127.0.0.1]': 'a loopback address (127.0.0.0/8), inside IPv6',
      'localhost:3000': 'a loopback name (localhost)',
      'printer.local': 'a name for local use (*.local)',
      '8.8.8.8': 'a public IP address: an allow-list names hosts, not addresses',
    });
  });
});

describe('the deliverables an official query names', () => {
  it('lists the report, the JSON files and the plots of the Deliverables section, with plots in their folder', () => {
    const deliverables = namedDeliverables(
      'Study X; see notes.json of the authors.\\n\\nDeliverables:\\n1) research_report.md as a paper; embed ![c](deliverables/plots/...).\\n' +
        '2) deliverables/index.json manifest.\\n3) deliverables/plots/ with at least these PNGs: a_curve.png, b.png.\\n' +
        '4) results/metrics.json. Also results/metrics.json again and ../escape.json.',
    );
    expect(deliverables.map(({ id, kind, path }) => ({ id, kind, path }))).toEqual([
      { id: 'research-report', kind: 'report', path: 'research_report.md' },
      { id: 'deliverables-index', kind: 'json', path: 'deliverables/index.json' },
      { id: 'plot-a-curve', kind: 'plot', path: 'deliverables/plots/a_curve.png' },
      { id: 'plot-b', kind: 'plot', path: 'deliverables/plots/b.png' },
      { id: 'results-metrics', kind: 'json', path: 'results/metrics.json' },
    ]);
  });

  it('assumes research_report.md when the query names no report', () => {
    expect(namedDeliverables('Do it.').map((deliverable) => deliverable.path)).toEqual([
      'research_report.md',
    ]);
  });
});

describe('mass tasks import-official', () => {
  it('builds a valid suite: bare prompts as given, free-text teams, network by allow-list, no graders, the directive', async () => {
    const out = path.join(await freshDir(), 'official');
    const imported = await importOfficialTasks(checkout, out);
    expect(imported.tasks.map(({ id, domain, split, sft }) => ({ id, domain, split, sft }))).toEqual([
      { id: 'query11', domain: 'finance', split: 'train', sft: true },
      { id: 'query21', domain: 'pharmacy', split: 'train', sft: false },
      { id: 'query31', domain: 'robotics', split: 'test', sft: false },
    ]);
    expect(imported.tasks[1]!.excludedFromCollection).toMatch(/no workflow that beat/);
    expect(imported.tasks.every((task) => task.warning === null)).toBe(true);

    const suite = await loadSuite(out);
    expect(suite.name).toBe('official');
    const [finance, pharmacy, robotics] = suite.tasks;
    const bare = await readFile(path.join(checkout, 'tasks/bare/query11.txt'), 'utf8');
    expect(finance!.prompt).toBe(bare);
    expect(finance!.manifest.oracle).toBeUndefined();
    expect(finance!.manifest.environment.network).toEqual({
      allow: expect.arrayContaining(['example-rates.org', 'fred.stlouisfed.org', 'pypi.org']),
    });
    expect(pharmacy!.manifest.environment.network).toEqual({
      allow: expect.arrayContaining(['files.rcsb.org']),
    });
    expect(finance!.manifest.deliverables.map((deliverable) => deliverable.path)).toEqual([
      'research_report.md',
      'deliverables/plots/term_premium.png',
      'deliverables/plots/forecast_errors.png',
      'results/metrics.json',
    ]);
    const team = await readFile(path.join(out, 'query11', 'team.md'), 'utf8');
    expect(team).toMatch(/^Create an agent team with following agent candidates/);
    expect(team).toContain('"agent_id": "agent_econometrician"');
    expect(team).toContain('In logs.txt, Document all created and spawned agents');
    expect(team).not.toContain('Use uv for all Python workflows');
    expect(team).not.toContain('Estimate the term premium of a synthetic yield curve');
    expect(robotics!.manifest.split).toBe('test');

    const directive = await readFile(path.join(checkout, 'tasks/teacher_directive.txt'), 'utf8');
    expect(finance!.teacherDirective).toBe(directive);
    const prompt = episodePrompt({
      task: 'task',
      teacher: true,
      teacherDirective: finance!.teacherDirective ?? undefined,
    });
    expect(prompt).toContain('synthetic test directive');
    expect(prompt).not.toContain('## How to run this team');

    const record = JSON.parse(await readFile(path.join(out, 'import.json'), 'utf8'));
    expect(record.tasks[0].files['tasks/bare/query11.txt']).toMatch(/^[0-9a-f]{64}$/);
    expect(record.tasks[1].excludedFromTeacherCollection).toMatch(/no workflow that beat/);
  });

  it('never writes into a folder that holds something, and names what to do', async () => {
    const out = await freshDir();
    await writeFile(path.join(out, 'mine.txt'), 'keep me');
    await expect(importOfficialTasks(checkout, out)).rejects.toThrow(/not empty.*choose a new folder/);
    expect(await readFile(path.join(out, 'mine.txt'), 'utf8')).toBe('keep me');
  });

  it('names the missing file and the field of a broken checkout', async () => {
    const broken = path.join(await freshDir(), 'checkout');
    await cp(checkout, broken, { recursive: true });
    await writeFile(
      path.join(broken, 'tasks/splits.json'),
      JSON.stringify({ designated_train: [11, 99], test: [31], domains: { finance: [11], robotics: [31] } }),
    );
    const out = path.join(await freshDir(), 'suite');
    await expect(importOfficialTasks(broken, out)).rejects.toThrow(/task 99 is in no list of "domains"/);
    await writeFile(
      path.join(broken, 'tasks/splits.json'),
      JSON.stringify({ designated_train: [11, 12], test: [], domains: { finance: [11, 12] } }),
    );
    await expect(importOfficialTasks(broken, out)).rejects.toThrow(
      /query12\.txt: task 12's bare query is missing/,
    );
    await writeFile(path.join(broken, 'tasks/splits.json'), JSON.stringify({ test: [] }));
    await expect(importOfficialTasks(broken, out)).rejects.toThrow(/field "designated_train"/);
  });
});
