/* global process, console */
// An external trainer for the command back-end's tests: records its argv and environment, makes an adapter under
// --out, and prints what FAKE_COMMAND_MODE asks: a result line (default), nothing (silent), a broken line (broken),
// a failure (fail) or a path that does not exist (missing).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const out = args[args.indexOf('--out') + 1];
const mode = process.env.FAKE_COMMAND_MODE ?? 'result';
mkdirSync(join(out, 'adapter'), { recursive: true });
writeFileSync(join(out, 'args.json'), JSON.stringify(args));
console.log(`training with token ${process.env.FAKE_HUB_TOKEN ?? 'none'}`);
console.log('{"progress": 0.5}');
if (mode === 'fail') {
  console.error('ValueError: unknown dataset format');
  process.exit(3);
}
if (mode === 'broken') console.log('{"adapterPath": ');
if (mode === 'missing') console.log(JSON.stringify({ adapterPath: 'nowhere' }));
if (mode === 'result') {
  console.log(
    JSON.stringify({
      adapterPath: 'adapter',
      metrics: { steps: 3, supervisedTokensProcessed: 99, trainLoss: [{ step: 3, loss: 0.5 }] },
    }),
  );
}
console.log('done');
