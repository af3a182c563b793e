import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { servedHost } from '../../src/hosting/served-host.js';
import type { DeploymentProbe } from '../../src/train/deployment-check.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { defaultTrainerPython } from '../../src/train/trainer-python.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { sharedTinyModels } from '../support/shared-runs.js';
import { startFakeVllm, type FakeVllm } from '../train/fake-vllm.js';
import { trainerLibrariesMissing } from '../train/support.js';
import { trainedRun } from './trained-run.js';

const python = defaultTrainerPython();
const missing = trainerLibrariesMissing(python);
if (missing !== undefined) console.warn(`fp8-deployment.e2e.test.ts skipped: ${missing}`);

/** A restart command: tells the fake server to come back on {model_path} as {served_as}. */
const restartScript = [
  'const [modelPath, servedAs, url] = process.argv.slice(1);',
  "await fetch(url + '/_test/restart', { method: 'POST', body: JSON.stringify({ model_path: modelPath, served_as: servedAs }) });",
].join('\n');

const directory = temporaryDirectory('mass-fp8-deploy-');
afterAll(() => directory.remove());
let server: FakeVllm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.skipIf(missing !== undefined)('rsi.deploy: restart with format fp8, on a tiny Qwen3', () => {
  it('exports the merged weights to FP8, restarts the server on them, and checks it against the export', async () => {
    // Built by whichever file asks first (test/support/shared-runs.ts); the export writes beside the run, not there.
    const merged = (await sharedTinyModels(python)).qwen3.path;
    const runDirectory = join(directory.path, 'run');
    const trainDirectory = join(runDirectory, 'train', 'L1');
    const probe: DeploymentProbe = {
      schemaVersion: 1,
      kind: 'deployment-probe',
      tokens: [2, 3, 4, 5, 6, 7, 8, 9],
      parent: [-4, -4, -4, -4, -4, -4, -4],
      trained: [-4, -4, -4, -4, -4, -4, -4],
      trainedWeights: 'the merged model',
      maxGenerationChange: 0,
    };
    const { registry, l1 } = await trainedRun(runDirectory, { probe, mergedPath: merged });
    const fp8Probe = join(trainDirectory, 'fp8', 'probe.json');
    // The server answers what the export's own forward gives: the FP8 weights it was restarted on.
    server = await startFakeVllm({
      models: ['qwen3'],
      promptLogprobs: (model) =>
        model === 'mass-L1'
          ? (JSON.parse(readFileSync(fp8Probe, 'utf8')) as DeploymentProbe).trained.map(
              (value) => value + 0.01,
            )
          : undefined,
    });
    const config = parseRunConfig(
      {
        name: 'fp8',
        suite: DEMO_SUITE,
        roles: { executor: { baseUrl: server.baseUrl, model: 'qwen3' } },
        rsi: {
          trainer: { kind: 'python', python },
          deploy: {
            kind: 'restart',
            format: 'fp8',
            argv: [
              process.execPath,
              '--input-type=module',
              '-e',
              restartScript,
              '{model_path}',
              '{served_as}',
              server.url,
            ],
          },
        },
      },
      'rsi.yaml',
    );
    await servedHost(config).serve(l1, registry, runDirectory);

    const restart = server.requests.find((request) => request.path === '/_test/restart');
    expect(restart?.body).toEqual({ model_path: join(trainDirectory, 'fp8'), served_as: 'mass-L1' });
    const exported = JSON.parse(readFileSync(join(trainDirectory, 'fp8', 'config.json'), 'utf8')) as {
      quantization_config: { quant_method: string; weight_block_size: number[] };
    };
    expect(exported.quantization_config).toMatchObject({
      quant_method: 'fp8',
      weight_block_size: [128, 128],
    });
    const check = (await ModelRegistry.open(runDirectory)).require('L1').deploymentCheck!;
    expect(check).toMatchObject({ weights: 'fp8', tolerance: 0.15, tokens: 8 });
    expect(check.meanDifferenceFromGeneration).toBeCloseTo(0.01, 6);
  }, 300_000);
});
