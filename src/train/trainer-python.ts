import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The virtual environment `scripts/install-trainer.sh` makes at the package root, with the trainer's pinned
 * requirements. Two folders up is the package root, from `src/train/` and from `dist/train/` alike.
 */
export const TRAINER_VENV = fileURLToPath(new URL('../../.venv-trainer', import.meta.url));

/**
 * The Python that runs `train_lora.py` when the configuration names none: `MASS_TRAINER_PYTHON`, else the
 * installed virtual environment's, else the first `python3` on the PATH (enough for a dry run, not to train).
 */
export function defaultTrainerPython(environment: NodeJS.ProcessEnv = process.env): string {
  const named = environment.MASS_TRAINER_PYTHON;
  if (named !== undefined && named !== '') return named;
  const installed = `${TRAINER_VENV}/bin/python`;
  return existsSync(installed) ? installed : 'python3';
}
