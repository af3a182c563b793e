import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A Harbor task folder written for a test: an instruction and a verifier, and any other files (task.toml, …). */
export function writeHarborTask(root: string, name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [file, text] of Object.entries({
    'instruction.md': 'Do it.\n',
    'tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
    ...files,
  })) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}
