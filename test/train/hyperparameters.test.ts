import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { resolveHyperparameters } from '../../src/train/hyperparameters.js';

describe('training hyperparameters', () => {
  it("default to the paper's recipe", () => {
    expect(resolveHyperparameters()).toEqual({
      loraRank: 64,
      loraAlpha: 128,
      loraDropout: 0.05,
      loraTargetModules: [
        'q_proj',
        'k_proj',
        'v_proj',
        'o_proj',
        'gate_proj',
        'up_proj',
        'down_proj',
        'in_proj_qkv',
        'in_proj_z',
        'out_proj',
      ],
      learningRate: 3e-5,
      adamBetas: [0.9, 0.95],
      weightDecay: 0,
      warmupSteps: 5,
      minLearningRateRatio: 0.1,
      maxGradNorm: 1,
      steps: 1624,
      batchSize: 3,
      lossNormalization: 'window',
      orchestratorProbability: 1 / 3,
      evalEvery: 150,
      checkpointEvery: 150,
      lossChunkSize: 512,
      resumeEvery: 50,
      mergeIntoParent: true,
      gradientCheckpointing: true,
      dtype: 'bfloat16',
    });
  });

  it('take changes field by field, an undefined field keeping its default', () => {
    const hyper = resolveHyperparameters({
      steps: 10,
      evalEvery: 5,
      checkpointEvery: 10,
      loraRank: undefined,
    });
    expect(hyper).toMatchObject({ steps: 10, evalEvery: 5, checkpointEvery: 10, loraRank: 64 });
  });

  it('name the wrong field', () => {
    expect(() => resolveHyperparameters({ learningRate: -1 })).toThrow(
      /training hyperparameters: learningRate: /,
    );
    expect(() => resolveHyperparameters({ checkpointEvery: 100 })).toThrow(
      /checkpointEvery: 100 is not a multiple of evalEvery 150/,
    );
    expect(() => resolveHyperparameters({ epochs: 2 } as never)).toThrow(UserError);
    expect(() => resolveHyperparameters({ lossNormalization: 'sequence' } as never)).toThrow(
      /lossNormalization: /,
    );
    expect(() => resolveHyperparameters({ lossChunkSize: 0 })).toThrow(/lossChunkSize: /);
    expect(() => resolveHyperparameters({ resumeEvery: 2.5 })).toThrow(/resumeEvery: /);
  });
});
