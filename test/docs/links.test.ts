// Every link of README.md and docs/ leads somewhere in this repository: a file that is there and, for a page, a
// heading that is there. Pages move between the README and docs/; this keeps their links from rotting.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown page's headings, a repeated one numbered as GitHub numbers it. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of withoutCode(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(match[1]!);
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The page without its fenced code blocks, whose text is no link and no heading. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** Every link target of a page that is not a web address. */
function localLinks(markdown: string): string[] {
  return [...withoutCode(markdown).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target));
}

interface Broken {
  page: string;
  target: string;
  reason: string;
}

function brokenLinks(page: string): Broken[] {
  const markdown = readFileSync(path.join(ROOT, page), 'utf8');
  return localLinks(markdown).flatMap((target): Broken[] => {
    const [file, anchor] = target.split('#') as [string, string | undefined];
    const resolved = file === '' ? path.join(ROOT, page) : path.resolve(ROOT, path.dirname(page), file);
    const relative = path.relative(ROOT, resolved);
    if (relative.startsWith('..') || path.isAbsolute(relative))
      return [{ page, target, reason: 'leads outside the repository' }];
    if (!existsSync(resolved)) return [{ page, target, reason: `${relative} is not there` }];
    if (anchor === undefined || !resolved.endsWith('.md')) return [];
    return anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)
      ? []
      : [{ page, target, reason: `${relative} has no heading #${anchor}` }];
  });
}

const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

describe('the links of README.md and docs/', () => {
  it('makes anchors as GitHub does', () => {
    expect(anchorOf("The paper's Table 1 on your own run")).toBe('the-papers-table-1-on-your-own-run');
    expect(anchorOf('Checking the model server (`mass doctor`)')).toBe(
      'checking-the-model-server-mass-doctor',
    );
    expect(anchorOf('How soon a search finds a winning design: Figures 4 and 7')).toBe(
      'how-soon-a-search-finds-a-winning-design-figures-4-and-7',
    );
    expect([...anchorsOf('# A\n```\n# not a heading\n```\n## A\n')]).toEqual(['a', 'a-1']);
  });

  it('finds a link that leads nowhere', () => {
    expect(localLinks('[a](docs/x.md#y) [b](https://example.org) `[c](z)`\n```\n[d](w)\n```')).toEqual([
      'docs/x.md#y',
      'z',
    ]);
  });

  it('leads every link to a file of the repository and a heading of it', () => {
    const broken = PAGES.flatMap(brokenLinks);
    expect(broken.map((link) => `${link.page}: (${link.target}) ${link.reason}`)).toEqual([]);
  });
});
