// Global setup of the end-to-end tier (vitest.config.ts): its tests run the `mass` CLI as users do, `bin/mass.js`,
// which runs the compiled dist/. Compile it first, so that they test the source they sit beside, not the last build.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export default function buildDist(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const started = Date.now();
  try {
    // Incremental: a build with nothing changed since the last one takes a third of a full build's processor time
    // (10 s against 32 s measured). Its record lives in dist/, so removing dist/ starts afresh; so does a plain
    // `npm run build` since (it rewrote every file and left the record behind, which could then call a file that went
    // back to its recorded text up to date).
    const record = join(root, 'dist', '.tsbuildinfo');
    const entry = join(root, 'dist', 'cli', 'main.js');
    if (existsSync(record) && (!existsSync(entry) || statSync(entry).mtimeMs > statSync(record).mtimeMs))
      rmSync(record);
    const incremental = ['--incremental', '--tsBuildInfoFile', record];
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', ...incremental], {
      cwd: root,
      stdio: 'pipe',
    });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
    throw new Error(`end-to-end tier: \`npm run build\` failed, so dist/ would be stale:\n${output}`);
  }
  console.log(`end-to-end tier: built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
