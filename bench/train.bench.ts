// The Python trainer on CPU (bench/train_bench.py, with the trainer's venv): steps per second with 1 and 2 DDP
// processes on the same windows, and the loss step's peak memory chunked against unchunked, in one run.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { defaultTrainerPython } from '../src/train/trainer-python.js';

const script = fileURLToPath(new URL('./train_bench.py', import.meta.url));

export async function benchTrain(): Promise<Record<string, unknown>> {
  const output = execFileSync(defaultTrainerPython(), [script], {
    encoding: 'utf8',
    env: {
      ...process.env,
      PYTHONDONTWRITEBYTECODE: '1',
      HF_HUB_OFFLINE: '1',
      TOKENIZERS_PARALLELISM: 'false',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(output.trim().split('\n').at(-1)!) as Record<string, unknown>;
}
