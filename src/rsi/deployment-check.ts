import type { RunConfig } from '../config/run-config.js';
import { UserError } from '../errors.js';

/**
 * Refuses, before anything runs, a loop whose later generations could not be served. vLLM applies a runtime LoRA
 * adapter to the weights it was started with, the base model's; from L2 on, each generation's adapter is trained
 * over its parent's merged weights, which that server does not hold. With `deploy: lora`, `--rounds 2` would
 * otherwise stop at the deployment of L2, after a whole round of search, champion runs, tournament and training.
 */
export function checkDeploymentFits(config: RunConfig, rounds: number): void {
  if (config.rsi.deploy.kind !== 'lora' || rounds < 2) return;
  throw new UserError(
    `rsi.deploy.kind lora can serve only the first trained generation, L1 (an adapter over the base model the ` +
      `server was started with): from L2 on each generation is trained over its parent's merged weights. For ` +
      `--rounds ${rounds}, deploy with \`rsi.deploy: { kind: restart, argv: [...] }\`, a command that restarts ` +
      'the server on {model_path} as {served_as} (README, "Generations"), or run --rounds 1',
  );
}
