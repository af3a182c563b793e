import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LIVE_PAGE_POLICY, LIVE_SCRIPT } from '../../src/view/live-script.js';
import { PAGE_POLICY } from '../../src/view/response.js';
import { respond } from '../../src/view/respond.js';
import {
  EVALUATION,
  FINAL_ANSWER,
  HOSTILE_FILE_NAME,
  RATIONALE,
  writeViewerRun,
} from './synthetic-viewer-run.js';

let root: string;
let ids: Awaited<ReturnType<typeof writeViewerRun>>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mass-view-'));
  ids = await writeViewerRun(join(root, 'run'));
  root = join(root, 'run');
});
afterAll(async () => {
  await rm(join(root, '..'), { recursive: true, force: true });
});

async function get(target: string) {
  const response = await respond(root, 'GET', target);
  // Whitespace between tags and runs of spaces are layout (prettier formats the templates), not content.
  const text = String(response.body).replace(/>\s+</g, '><').replace(/\s+/g, ' ');
  return { ...response, text };
}

/**
 * No element of the page can run anything: escaped text holds no `<`, so every `<name …>` is a real tag, and none
 * may be a script, an SVG, carry an event handler or point at a `javascript:` URL.
 */
function expectInert(text: string): void {
  const tags = [...text.matchAll(/<([A-Za-z][\w-]*)([^>]*)>/g)];
  expect(tags.length).toBeGreaterThan(10);
  for (const [tag, name, attributes] of tags) {
    expect(['script', 'svg', 'iframe', 'object', 'embed'], tag).not.toContain(name!.toLowerCase());
    expect(attributes, tag).not.toMatch(/\son[a-z]+\s*=/i);
    expect(attributes, tag).not.toMatch(/javascript:/i);
  }
}

describe('mass view: pages', () => {
  it('the run page lists the generation and its task, and allows no script but its live one, by hash', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    const policy = page.headers['Content-Security-Policy']!;
    // The one difference from every other page's policy: the live script by its hash, and fetches to the viewer.
    const hash = createHash('sha256').update(LIVE_SCRIPT).digest('base64');
    expect(policy).toBe(
      PAGE_POLICY.replace("script-src 'none'", `script-src 'sha256-${hash}'; connect-src 'self'`),
    );
    expect(policy).toBe(LIVE_PAGE_POLICY);
    expect(policy).toContain("default-src 'none'");
    expect(page.text).toContain('href="/generations/L0/demo-potency/"');
    expect(page.text).toContain('3 episodes');
    expect(page.text).toContain('&lt;script&gt;window.__pwned');
    // The live script, exactly once and exactly as hashed; the rest of the page is inert.
    const live = `<script>${LIVE_SCRIPT}</script>`;
    const raw = String(page.body);
    expect(raw.split(live)).toHaveLength(2);
    expectInert(raw.replace(live, ''));
  });

  it('the episode page shows the delegation with the subagent’s thread in place, call figures and the report', async () => {
    const page = await get(`/episodes/${ids.v1}/`);
    expect(page.status).toBe(200);
    const delegation = page.text.indexOf('<details class="delegation">');
    expect(delegation).toBeGreaterThan(0);
    // The subagent's own answer sits inside the delegation, before the orchestrator's final answer.
    const subagentAnswer = page.text.indexOf('The EC50 is 5.9 µM.');
    expect(subagentAnswer).toBeGreaterThan(delegation);
    expect(page.text.indexOf('All stages are done.')).toBeGreaterThan(subagentAnswer);
    expect(page.text).not.toContain('No subagent thread of this episode matches');
    expect(page.text).toContain(
      'call #1 · 340 ms · 1,001 prompt tokens · 51 completion tokens (7 reasoning)',
    );
    expect(page.text).toMatch(/<details class="reasoning"><summary>reasoning/);
    expect(page.text).toContain('<strong>EC50</strong>');
    expect(page.text).toContain(`src="/episodes/${ids.v1}/raw/figure.png"`);
    expect(page.text).toContain('<table><thead><tr><th>metric</th>');
    expect(page.text).toContain('success');
    expect(page.text).toContain('data/doses.csv');
    expect(page.text).toContain('a symbolic link, not followed');
    expect(page.text).toContain(encodeURIComponent(HOSTILE_FILE_NAME));
    expect(FINAL_ANSWER).toContain('<script>');
    expectInert(page.text);
  });

  it('a damaged episode.json and a cut-off threads.jsonl are named on the page, and the rest of the episode still shows', async () => {
    const page = await get(`/episodes/${ids.v0}/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="notes"');
    expect(page.text).toMatch(/episode\.json was left out: .*is corrupt/);
    expect(page.text).toContain('No episode.json: the outcome is not known.');
    // A cut-off threads.jsonl is named too; its complete lines are still shown.
    expect(page.text).toMatch(/threads\.jsonl[^<]*left out/);
    expect(page.text).toContain('<details class="delegation">');
  });

  it('a file page highlights code and renders Markdown from escaped text', async () => {
    const code = await get(`/episodes/${ids.v1}/files/analysis.py`);
    expect(code.text).toContain('<span class="tok-keyword">import</span>');
    expect(code.text).toContain('<span class="tok-comment"># fit &lt;script&gt;');
    expectInert(code.text);
    const report = await get(`/episodes/${ids.v1}/files/report.md`);
    expect(report.text).toContain('<h1>Potency &lt;script&gt;');
    // A javascript: link stays text; only http(s) becomes a link.
    expect(report.text).toContain('click me <span class="muted">(javascript:');
    expectInert(report.text);
  });

  it('the search page shows each version’s diff and the optimizer’s reasons, with its verdicts', async () => {
    const page = await get('/search/L0/demo-potency/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Changes from v0');
    expect(page.text).toContain('Fit a Hill curve and report the EC50.');
    expect(page.text).toContain('The analyst fitted the wrong curve.');
    expect(page.text).toContain('analyst: name the Hill model');
    expect(page.text).toContain(
      'its change to v0, the design it improved</summary><pre>analyst: instruction changed</pre>',
    );
    expect(page.text).toContain(`/compare?x=episodes%2F${ids.v1}&amp;y=episodes%2F${ids.v0}`);
    expectInert(page.text);
  });

  it('the comparison page shows both workspaces, every verdict on the pair and the files that differ', async () => {
    const page = await get(`/compare?x=episodes/${ids.v0}&y=episodes/${ids.v1}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('search/L0/demo-potency/v1/judgments/v1-vs-v0.json');
    expect(page.text).toContain(
      `Winner: <strong>y (${ids.v1})</strong> · judge toy-judge · seed 3 · mode random`,
    );
    expect(page.text).toContain(`Order: A was y (${ids.v1})`);
    expect(page.text).toContain(RATIONALE.slice(0, 30));
    expect(page.text).toContain('report.md: differs');
    expect(page.text).toContain('analysis.py: identical');
    expect(page.text).toContain('<span class="diff-add">+# Potency');
    expectInert(page.text);
  });

  it('an evaluation lists its judged pairs, and their comparison shows each judge, seed and order', async () => {
    const base = `evaluation/${EVALUATION.name}/episodes`;
    const listing = await get(`/evaluation/${EVALUATION.name}/`);
    expect(listing.text).toContain(`href="/${base}/${EVALUATION.candidate}/"`);
    expect(listing.text).toContain('<td>win, win</td>');
    const compareLink = `/compare?x=${encodeURIComponent(`${base}/${EVALUATION.candidate}`)}&amp;y=${encodeURIComponent(`${base}/${EVALUATION.baseline}`)}`;
    expect(listing.text).toContain(compareLink);
    const page = await get(compareLink.replace('&amp;', '&'));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h3>Evaluation judgments</h3>');
    expect(page.text).toContain(
      '<td>external-judge</td><td>11</td><td>baseline-first</td><td>L1 (x)</td><td>win</td>',
    );
    expect(page.text).toContain('The L1 workspace is better (candidate-first).');
    expect(page.text).toContain('report.md: differs');
    expectInert(page.text);
    const episode = await get(`/${base}/${EVALUATION.baseline}/`);
    expect(episode.status).toBe(200);
    expect(episode.text).toContain(`evaluation ${EVALUATION.name}</a>`);
  });

  it('the task and generation pages link the search’s episodes and comparisons', async () => {
    const task = await get('/generations/L0/demo-potency/');
    expect(task.text).toContain(`href="/episodes/${ids.reference}/"`);
    expect(task.text).toContain('v1 vs v0: first');
    const generation = await get('/generations/L0/');
    expect(generation.text).toContain('href="/generations/L0/demo-potency/"');
    expect(generation.text).toContain('<td>v1</td>');
  });
});

describe('mass view: workspace files', () => {
  it('serves images as images and everything else, SVG and HTML included, as plain text in a sandbox', async () => {
    const image = await get(`/episodes/${ids.v1}/raw/figure.png`);
    expect(image.headers['Content-Type']).toBe('image/png');
    for (const name of ['evil.svg', 'evil.html', encodeURIComponent(HOSTILE_FILE_NAME)]) {
      const file = await get(`/episodes/${ids.v1}/raw/${name}`);
      expect(file.status).toBe(200);
      expect(file.headers['Content-Type']).toBe('text/plain; charset=utf-8');
      expect(file.headers['Content-Security-Policy']).toContain('sandbox');
      expect(file.headers['X-Content-Type-Options']).toBe('nosniff');
      expect(file.headers['Content-Disposition']).toMatch(/^inline; filename\*=UTF-8''/);
    }
    const download = await get(`/episodes/${ids.v1}/raw/evil.html?download=1`);
    expect(download.headers['Content-Disposition']).toBe("attachment; filename*=UTF-8''evil.html");
  });

  it('refuses paths that leave the workspace: .., encoded separators, absolute paths, links out, NUL', async () => {
    const refused = [
      `/episodes/${ids.v1}/raw/..%2Fepisode.json`,
      `/episodes/${ids.v1}/raw/%2e%2e%2f%2e%2e%2fconfig.yaml`,
      `/episodes/${ids.v1}/raw/..%5Cepisode.json`,
      `/episodes/${ids.v1}/raw//etc/passwd`,
      `/episodes/${ids.v1}/raw/%2Fetc%2Fpasswd`,
      `/episodes/${ids.v1}/raw/passwd-link`,
      `/episodes/${ids.v1}/raw/record-link`,
      `/episodes/${ids.v1}/files/record-link`,
      `/episodes/${ids.v1}/raw/report.md%00.png`,
      `/episodes/${ids.v1}/raw/data`,
      `/episodes/..%2F..%2Fetc/`,
      '/episodes/no-such-episode/',
      '/generations/..%2F/',
      '/.//example.com',
      '/%2F%2Fexample.com',
    ];
    for (const target of refused) {
      const response = await get(target);
      expect(response.status, target).toBe(404);
      expect(response.text, target).not.toContain('root:');
      expect(response.headers.Location, target).toBeUndefined();
    }
    // The WHATWG URL rules resolve a plain `..` before routing: it lands on a path that is not a file route.
    const dotted = await get(`/episodes/${ids.v1}/raw/../../../config.yaml`);
    expect(dotted.text).not.toContain('name: viewer-test');
  });
});
