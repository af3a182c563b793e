import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareExport(program: Command): void {
  program
    .command('export')
    .description(
      "Export a merged generation for serving: block-wise FP8 in the layout of Qwen's FP8 checkpoints (128×128 e4m3 blocks, their scales, quantization_config), as the paper served its generations",
    )
    .requiredOption('--fp8', 'export to FP8 (the one format there is)')
    .requiredOption(
      '--src <dir>',
      'the merged BF16 checkpoint (a trained generation: <run>/train/<L>/merged)',
    )
    .requiredOption('--out <dir>', 'the FP8 checkpoint to write')
    .option(
      '--like <dir>',
      "an FP8 checkpoint (Qwen's own) whose layout to follow and check tensor by tensor",
    )
    .option(
      '--probe <file>',
      "the trainer's probe.json: scored by the exported model for the deployment check",
    )
    .option('--python <path>', "the Python with torch and transformers (default: the trainer's)")
    .action(lazyAction(async () => (await import('../commands/export.js')).exportAction));
}
