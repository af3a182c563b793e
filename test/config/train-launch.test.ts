import { describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { lineageSetting, trainerSetting } from '../../src/config/rsi-settings.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { UserError } from '../../src/errors.js';
import { modelKind } from '../../src/hosting/model-kind.js';

const configuration = (rsi: Record<string, unknown>, model?: object) =>
  parseRunConfig(
    {
      name: 'launch',
      suite: DEMO_SUITE,
      ...(model ? { model, roles: { executor: { model: 'mass-toy' } } } : {}),
      ...(model ? {} : { roles: { executor: { baseUrl: 'http://127.0.0.1:9/v1', model: 'Qwen/Qwen3-8B' } } }),
      rsi,
    },
    'run.yaml',
  );
const launchOf = (launch: object) => {
  const trainer = trainerSetting(configuration({ trainer: { kind: 'python', launch } }).rsi);
  if (trainer.kind !== 'python') throw new Error('expected the python trainer');
  return trainer.launch;
};
const refusal = (launch: object): string => {
  try {
    configuration({ trainer: { kind: 'python', launch } });
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as Error).message;
  }
  throw new Error('expected the launch to be refused');
};

describe('the python trainer’s launch (rsi.trainer.launch)', () => {
  it('is optional, and fills one node, rank 0 and ddp, leaving the rest to the script', () => {
    expect(launchOf({})).toEqual({ nodes: 1, nodeRank: 0, sharding: 'ddp' });
    expect(
      launchOf({
        processesPerNode: 8,
        gpusPerReplica: 2,
        gpuMemoryGiB: 79.5,
        nodes: 2,
        nodeRank: 1,
        rdzvEndpoint: 'gpu-0:29500',
      }),
    ).toEqual({
      processesPerNode: 8,
      gpusPerReplica: 2,
      gpuMemoryGiB: 79.5,
      nodes: 2,
      nodeRank: 1,
      rdzvEndpoint: 'gpu-0:29500',
      sharding: 'ddp',
    });
    expect(launchOf({ sharding: 'fsdp', gpusPerReplica: 1, rdzvEndpoint: '[fd00::1]:29500' })).toMatchObject({
      sharding: 'fsdp',
    });
    const trainer = trainerSetting(configuration({}).rsi);
    expect(trainer).toEqual({ kind: 'python' });
  });

  it('refuses, naming the field, several nodes without a meeting point, a rank outside them, and fsdp over several GPUs per replica', () => {
    expect(refusal({ nodes: 2 })).toMatch(
      /run\.yaml: rsi\.trainer\.launch\.rdzvEndpoint: 2 nodes must meet somewhere: give rdzvEndpoint/,
    );
    expect(refusal({ nodes: 2, nodeRank: 2, rdzvEndpoint: 'h:1' })).toMatch(
      /rsi\.trainer\.launch\.nodeRank: 2 is not one of the 2 node\(s\)/,
    );
    expect(refusal({ sharding: 'fsdp', gpusPerReplica: 4 })).toMatch(
      /rsi\.trainer\.launch\.gpusPerReplica: fsdp shards the model over the processes, one GPU each, so a replica cannot span 4 GPUs/,
    );
    expect(refusal({ rdzvEndpoint: 'no-port' })).toMatch(/rdzvEndpoint: host:port/);
    expect(refusal({ processesPerNode: 0 })).toMatch(/processesPerNode/);
    expect(refusal({ sharding: 'zero3' })).toMatch(/sharding/);
    expect(refusal({ gpus: 2 })).toMatch(/rsi\.trainer\.launch/);
  });

  it('is not a setting of a command trainer', () => {
    expect(() =>
      configuration({ trainer: { kind: 'command', argv: ['train'], launch: { processesPerNode: 2 } } }),
    ).toThrow(/rsi\.trainer/);
  });
});

describe('the lineage of generations (rsi.lineage)', () => {
  it("is the paper's, merged, unless set to adapters", () => {
    expect(lineageSetting(configuration({}).rsi)).toBe('merged');
    expect(lineageSetting(configuration({ lineage: 'adapters' }).rsi)).toBe('adapters');
    expect(() => configuration({ lineage: 'chained' })).toThrow(/rsi\.lineage/);
  });

  it('is refused for the toy model, which trains full weights', () => {
    const toy = configuration({ lineage: 'adapters' }, { kind: 'toy' });
    expect(() => modelKind(toy, 'toy.yaml')).toThrow(
      /toy\.yaml: rsi\.lineage: model\.kind toy trains full weights, not adapters/,
    );
    expect(() => modelKind(configuration({ lineage: 'merged' }, { kind: 'toy' }))).not.toThrow();
  });
});
