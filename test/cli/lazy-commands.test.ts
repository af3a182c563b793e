import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

import { lazyAction } from '../../src/cli/declarations/lazy-action.js';
import { buildProgram } from '../../src/cli/main.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** The modules a file loads as soon as it is imported: its imports and re-exports that are not type-only, not import(). */
function staticImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  return source.statements.flatMap((statement) => {
    if (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly)
      return [(statement.moduleSpecifier as ts.StringLiteral).text];
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly)
      return [(statement.moduleSpecifier as ts.StringLiteral).text];
    return [];
  });
}

/** Every module `start` loads before any of its code runs: source files under src/, and packages by name. */
function loadedModules(start: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith('.')) {
        const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts');
        if (!existsSync(target)) throw new Error(`${file} imports ${specifier}, which is not there`);
        visit(target);
      } else if (!specifier.startsWith('node:')) packages.add(specifier);
    }
  };
  visit(start);
  return { files: [...files].map((file) => path.relative(SRC, file)).sort(), packages: [...packages].sort() };
}

describe('the mass program', () => {
  it('declares every command', () => {
    const names = buildProgram().commands.map((command) => command.name());
    expect(names).toEqual([
      'demo',
      'episode',
      'proxy',
      'log',
      'models',
      'doctor',
      'plan',
      'tasks',
      'rank',
      'data',
      'judge',
      'search',
      'distill',
      'rsi',
      'train',
      'export',
      'eval',
      'benchmark',
      'report',
      'compare',
      'analyze',
      'students',
      'config',
      'view',
      'status',
      'worker',
      'queue',
    ]);
  });

  it('loads no command’s work to declare them: only commander and small modules of defaults', () => {
    const { files, packages } = loadedModules(path.join(SRC, 'cli/main.ts'));
    expect(packages, 'a package imported while declaring the commands: make its import lazy').toEqual([
      'commander',
    ]);
    expect(
      files.filter((file) => file.startsWith('cli/commands/')),
      'a command module imported while declaring the commands: import it in its action (lazyAction)',
    ).toEqual([]);
    expect(files).toContain('cli/declarations/episode.ts');
  });

  it('loads the Anthropic SDK and the queue’s BullMQ and Redis client only when a run calls or sends to them', () => {
    // Together some 570 of the 1,600 files `mass search` loaded, about 0.8 s of processor time on every command.
    const onDemand = ['@anthropic-ai/sdk', 'bullmq', 'ioredis'];
    for (const command of [
      'search',
      'distill',
      'rsi',
      'eval',
      'students',
      'benchmark',
      'report',
      'doctor',
      'plan',
    ]) {
      const { packages } = loadedModules(path.join(SRC, `cli/commands/${command}.ts`));
      expect(packages, `mass ${command}`).toContain('zod');
      expect(
        packages.filter((name) => onDemand.includes(name)),
        `mass ${command} loads these before any model is called or any episode sent: make their import lazy`,
      ).toEqual([]);
    }
    expect(loadedModules(path.join(SRC, 'cli/commands/worker.ts')).packages).toContain('bullmq');
  });

  it('loads no model client in the commands that only read runs', () => {
    for (const command of ['report', 'view', 'status', 'compare']) {
      const { packages } = loadedModules(path.join(SRC, `cli/commands/${command}.ts`));
      expect(
        packages.filter((name) => ['openai', 'undici', '@anthropic-ai/sdk'].includes(name)),
        `mass ${command}`,
      ).toEqual([]);
    }
    expect(loadedModules(path.join(SRC, 'cli/commands/search.ts')).packages).toContain('openai');
  });
});

describe('lazyAction', () => {
  it('loads the action only when it runs, and passes it what commander gives', async () => {
    const calls: unknown[][] = [];
    let loads = 0;
    const action = lazyAction(async () => {
      loads++;
      return async (name: string, flags: { json?: boolean }) => {
        calls.push([name, flags]);
      };
    });
    expect(loads).toBe(0);
    await action('a', { json: true });
    expect(loads).toBe(1);
    expect(calls).toEqual([['a', { json: true }]]);
  });
});
