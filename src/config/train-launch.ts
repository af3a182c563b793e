import { z } from 'zod';

/**
 * How the bundled Python trainer is launched (`rsi.trainer.launch`, and `mass train`'s flags): how many processes,
 * on how many machines, how the model is spread over the GPUs. Every field the configuration leaves out is the
 * script's to choose: every visible GPU, the fewest GPUs per replica that its memory estimate fits; one process on
 * a machine without a GPU.
 */
export const TrainLaunch = z
  .object({
    processesPerNode: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'training processes on each machine (torchrun --nproc_per_node); default: one per replica on every visible GPU, one on a CPU',
      ),
    nodes: z.number().int().positive().default(1).describe('machines training together (torchrun --nnodes)'),
    nodeRank: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe('this machine among them, 0 to nodes − 1 (torchrun --node_rank)'),
    rdzvEndpoint: z
      .string()
      .regex(/^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):\d{1,5}$/, 'host:port, e.g. 10.0.0.1:29500')
      .optional()
      .describe('where the machines meet (torchrun --rdzv_endpoint, host:port); required when nodes > 1'),
    gpusPerReplica: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'GPUs one data-parallel replica spans (its layers spread over them); default: the fewest the memory planner finds enough',
      ),
    sharding: z
      .enum(['ddp', 'fsdp'])
      .default('ddp')
      .describe(
        'ddp: each replica holds the whole model; fsdp: the model sharded over every process (FSDP2), one GPU each',
      ),
    gpuMemoryGiB: z
      .number()
      .positive()
      .optional()
      .describe("each GPU's memory the planner may count on, in GiB; default: what the GPU reports"),
  })
  .strict()
  .superRefine((launch, context) => {
    if (launch.nodes > 1 && launch.rdzvEndpoint === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['rdzvEndpoint'],
        message: `${launch.nodes} nodes must meet somewhere: give rdzvEndpoint (host:port of node 0, e.g. 10.0.0.1:29500)`,
      });
    }
    if (launch.nodeRank >= launch.nodes) {
      context.addIssue({
        code: 'custom',
        path: ['nodeRank'],
        message: `${launch.nodeRank} is not one of the ${launch.nodes} node(s): nodeRank runs from 0 to nodes − 1`,
      });
    }
    if (launch.sharding === 'fsdp' && launch.gpusPerReplica !== undefined && launch.gpusPerReplica > 1) {
      context.addIssue({
        code: 'custom',
        path: ['gpusPerReplica'],
        message: `fsdp shards the model over the processes, one GPU each, so a replica cannot span ${launch.gpusPerReplica} GPUs: leave gpusPerReplica out (or 1), or use sharding ddp`,
      });
    }
  });
/** The launch as the configuration gives it, defaults filled in. */
export type TrainLaunch = z.output<typeof TrainLaunch>;
export type TrainLaunchInput = z.input<typeof TrainLaunch>;
