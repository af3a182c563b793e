/* global process, console */
// Stands in for `python3 train_lora.py` in tests: same arguments, same files, no torch. FAKE_TRAINER_MODE picks
// what it does: ok (default), crash, refuse, missing-weights, no-report.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [, script, ...args] = process.argv;
const option = (name) => args[args.indexOf(name) + 1];
const out = option('--out');
const config = JSON.parse(readFileSync(option('--config'), 'utf8'));
writeFileSync(join(out, 'argv.json'), JSON.stringify({ script, args }));
const mode = process.env.FAKE_TRAINER_MODE ?? 'ok';

console.log(`loading ${config.parentModel}`);
if (mode === 'crash') {
  console.error('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB');
  process.exit(1);
}
if (mode === 'refuse') {
  console.error(`error: ${option('--data')}/train.windows.jsonl window 3: a label differs from its input id`);
  process.exit(2);
}
for (let step = 1; step <= config.hyper.steps; step++)
  console.log(`step ${step}/${config.hyper.steps} loss 1.0`);
mkdirSync(join(out, 'checkpoints', 'step-000001'), { recursive: true });
mkdirSync(join(out, 'checkpoints', 'step-000002'), { recursive: true });
mkdirSync(join(out, 'merged'), { recursive: true });
if (mode !== 'no-report') {
  const report = {
    schemaVersion: 1,
    kind: 'python-training-report',
    steps: 2,
    supervisedTokensProcessed: 700,
    trainLoss: [
      { step: 1, loss: 1.5, learningRate: 3e-5 },
      { step: 2, loss: 1.2, learningRate: 3e-6 },
    ],
    validationLoss: [
      { step: 1, loss: 1.1 },
      { step: 2, loss: 1.3 },
    ],
    checkpoints: [
      { step: 1, path: 'checkpoints/step-000001', validationLoss: 1.1 },
      { step: 2, path: 'checkpoints/step-000002', validationLoss: 1.3 },
    ],
    chosenCheckpoint: { step: 1, path: 'checkpoints/step-000001', validationLoss: 1.1 },
    adapterPath: mode === 'missing-weights' ? 'checkpoints/step-999999' : 'checkpoints/step-000001',
    mergedPath: 'merged',
    seconds: 0.1,
    versions: { python: 'fake' },
  };
  writeFileSync(join(out, 'report.json'), JSON.stringify(report));
}
