import type { RunConfig } from '../config/run-config.js';
import { commandTrainer } from '../train/command-trainer.js';
import { pythonTrainer } from '../train/python-trainer.js';
import { toyTrainer } from '../train/toy-trainer.js';
import type { Trainer } from '../train/trainer.js';

/** The trainer back-end the configuration names. */
export function trainerFromConfig(config: RunConfig): Trainer {
  const { trainer } = config.rsi;
  switch (trainer.kind) {
    case 'toy':
      return toyTrainer();
    case 'python':
      return pythonTrainer({ python: trainer.python, env: trainer.env });
    case 'command':
      return commandTrainer({
        argv: trainer.argv,
        cwd: trainer.cwd,
        env: trainer.env,
        adapterPath: trainer.adapterPath,
        mergedPath: trainer.mergedPath,
      });
  }
}
