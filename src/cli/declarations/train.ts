import type { Command } from 'commander';

import { lazyAction } from './lazy-action.js';

export function declareTrain(program: Command): void {
  program
    .command('train')
    .description(
      'Trains one LoRA outside a loop, with the trainer and the records of `mass rsi` (config.json, plan.json, train.log, report.json in --out)',
    )
    .requiredOption(
      '--data <dir>',
      'the training data: `mass data build --out`, or a run’s distill/<generation>/dataset',
    )
    .requiredOption('--base <model>', 'the full weights the LoRA goes over: a model directory or a hub id')
    .requiredOption('--out <dir>', 'where the checkpoints, the adapter, the merged model and the records go')
    .option('--config <file>', 'a run configuration: its rsi.trainer and rsi.hyperparameters are used')
    .option('--steps <n>', 'optimizer steps, in place of the recipe’s (the paper’s: 1624)')
    .option('--seed <n>', 'the seed of the sampler and of the LoRA’s initialisation', '0')
    .option('--init-adapter <dir>', 'start from this PEFT adapter instead of a fresh LoRA')
    .option('--resume', 'continue the interrupted training in --out from its last resume state')
    .option('--processes <n>', 'training processes on this machine (torchrun --nproc_per_node)')
    .option('--gpus-per-replica <n>', 'GPUs each data-parallel replica spans')
    .option(
      '--sharding <kind>',
      'ddp (each replica holds the model) or fsdp (the model sharded over the processes)',
    )
    .option(
      '--plan',
      'check the data, resolve the launch and estimate its memory (needs torch); train nothing',
    )
    .option('--dry-run', 'check the data and plan the steps, without torch (no launch, no memory estimate)')
    .option('--json', 'print the result with the report (with --plan: the plan) as JSON')
    .addHelpText(
      'after',
      '\nExit status: 0 trained (or planned), 2 a problem to fix (the data, a flag, a launch that does not fit), ' +
        '3 the trainer failed (its log is named).',
    )
    .action(lazyAction(async () => (await import('../commands/train.js')).trainAction));
}
