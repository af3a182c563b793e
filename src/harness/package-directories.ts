import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * An installed npm package's folder and those of every package it depends on (`dependencies` and the
 * `optionalDependencies` that are installed), found as Node finds them: in the `node_modules` folders from the
 * requiring package up. A sandbox shows the harness this way, folder by folder, never the checkout that holds its
 * `node_modules` (qwen-code loads node-pty, an optional dependency installed beside it, for its shell).
 */
export function packageDirectories(packageDirectory: string): string[] {
  const found = new Set<string>();
  const pending = [realpathSync(packageDirectory)];
  for (let directory = pending.pop(); directory !== undefined; directory = pending.pop()) {
    if (found.has(directory)) continue;
    found.add(directory);
    for (const name of dependencyNames(directory)) {
      const dependency = locate(name, directory);
      if (dependency !== null) pending.push(dependency);
    }
  }
  return [...found];
}

function dependencyNames(directory: string): string[] {
  let manifest: { dependencies?: unknown; optionalDependencies?: unknown };
  try {
    manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as typeof manifest;
  } catch {
    return [];
  }
  const names = (field: unknown): string[] =>
    field !== null && typeof field === 'object' ? Object.keys(field) : [];
  return [...names(manifest.dependencies), ...names(manifest.optionalDependencies)];
}

/** `name` as required from a file of `from`: the nearest `node_modules/<name>` from there up. */
function locate(name: string, from: string): string | null {
  for (let directory = from; ; directory = dirname(directory)) {
    const candidate = join(directory, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(directory) === directory) return null;
  }
}
