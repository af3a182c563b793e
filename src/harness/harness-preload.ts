import { chmodSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * What the harness's preloads share (`agent-tool-profile.ts`, `schema-check-cache.ts`, the guard of
 * `guarded-node.ts`): each is written into the sandbox's own read-only files, and the first two import one chunk of
 * qwen-code's bundle, found here on the host (inside the sandbox it is at the same path).
 */

/** The host path of one chunk of qwen-code's bundle, `chunks/chunk-….js`. */
export function qwenCodeChunkPath(chunk: string): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@qwen-code/qwen-code/package.json')), chunk);
}

/** Writes a preload's source into `directory`, readable by the sandbox's uid, and returns its path. */
export function writeHarnessPreload(directory: string, fileName: string, source: string): string {
  const path = join(directory, fileName);
  writeFileSync(path, source);
  chmodSync(path, 0o644);
  return path;
}
