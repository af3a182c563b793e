// Global setup of the end-to-end tier (vitest.config.ts): its tests run the `mass` CLI as users do, `bin/mass.js`,
// which runs the compiled dist/. Compile it first, so that they test the source they sit beside, not the last build.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export default function buildDist(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const started = Date.now();
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'pipe' });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
    throw new Error(`end-to-end tier: \`npm run build\` failed, so dist/ would be stale:\n${output}`);
  }
  console.log(`end-to-end tier: built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
