#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('mass: dist/ is missing. Run `npm install` (or `npm run build`) in the project root first.');
  process.exit(1);
}
const { main } = await import(entry.href);
await main(process.argv);
