import type { Command } from 'commander';

import { generationEndpoints, isUnaddressed, type Endpoint } from '../../config/endpoint.js';
import { loadRunConfig, parseRunConfig } from '../../config/run-config.js';
import { describeDoctorReport } from '../../doctor/doctor-table.js';
import { doctorPlan } from '../../doctor/doctor-plan.js';
import { doctorReport, runDoctor } from '../../doctor/run-doctor.js';
import { modelKind } from '../../hosting/model-kind.js';
import { startToyModel } from '../../toy/toy-model.js';
import { durationMs } from '../../timer-duration.js';
import { BASE_TOY_WEIGHTS } from '../../toy/weights.js';
import { parseDurationSeconds } from '../duration.js';

interface DoctorFlags {
  config: string;
  json?: boolean;
  timeout: string;
}

const TOY_NOTE =
  'model.kind toy: the built-in toy model, served by mass itself on a loopback port for these checks. There are no server flags to set; the checks show that mass’s own server answers as a well-configured vLLM does.';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check every model server of a run configuration: the model served and its context, tool calls structured, reasoning apart from the content, usage in streams, the seed, runtime LoRA routes and throughput; each failure names the server flag that fixes it',
    )
    .requiredOption('--config <file>', 'the run configuration (YAML; schema: `mass config schema`)')
    .option('--json', 'print the report as JSON')
    .option('--timeout <seconds>', 'time limit of each probe request', '120')
    .action(async (flags: DoctorFlags) => {
      const config = parseRunConfig(await loadRunConfig(flags.config), flags.config);
      modelKind(config, flags.config);
      const timeoutMs = durationMs(parseDurationSeconds(flags.timeout, '--timeout'), 's');
      const toy =
        config.model.kind === 'toy'
          ? await startToyModel({
              weights: BASE_TOY_WEIGHTS,
              modelName: config.roles.executor.model,
              seed: config.seed,
            })
          : null;
      try {
        const place = (endpoint: Endpoint): Endpoint =>
          toy && isUnaddressed(endpoint) ? { ...endpoint, baseUrl: toy.baseUrl } : endpoint;
        const plan = doctorPlan(config, {
          roles: generationEndpoints(config, config.roles.executor.model, place),
          evaluation: true,
        });
        const endpoints = await runDoctor({
          config,
          plan,
          depth: 'full',
          listing: 'required',
          runtimeLora: true,
          timeoutMs,
        });
        const report = doctorReport({
          kind: toy ? 'toy' : 'served',
          note: toy ? TOY_NOTE : null,
          endpoints,
          plan,
        });
        console.log(flags.json ? JSON.stringify(report, null, 2) : describeDoctorReport(report));
        if (report.failed) process.exitCode = 2;
      } finally {
        await toy?.close();
      }
    });
}
