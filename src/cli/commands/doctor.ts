import { join } from 'node:path';

import { describeDoctorReport } from '../../doctor/doctor-table.js';
import { doctorPlan } from '../../doctor/doctor-plan.js';
import { doctorReport, runDoctor } from '../../doctor/run-doctor.js';
import {
  throughputRecord,
  throughputRecordPath,
  writeThroughputRecord,
} from '../../doctor/throughput-record.js';
import { checkRegisteredGeneration, describeGenerationCheck } from '../../hosting/generation-check.js';
import { loadConfiguredModel } from '../../session/run-session.js';
import { durationMs } from '../../timer-duration.js';
import { parseDurationSeconds } from '../duration.js';

interface DoctorFlags {
  config: string;
  json?: boolean;
  timeout: string;
  checkGeneration?: string;
  runs: string;
  record?: string;
}

const TOY_NOTE =
  'model.kind toy: the built-in toy model, served by mass itself on a loopback port for these checks. There are no server flags to set; the checks show that mass’s own server answers as a well-configured vLLM does.';

export async function doctorAction(flags: DoctorFlags): Promise<void> {
  const { config, kind } = await loadConfiguredModel(flags.config);
  if (flags.checkGeneration !== undefined) {
    const check = await checkRegisteredGeneration({
      config,
      runDirectory: join(flags.runs, config.name),
      generation: flags.checkGeneration,
    });
    console.log(flags.json ? JSON.stringify(check, null, 2) : describeGenerationCheck(check));
    if (check.mismatch !== null) process.exitCode = 2;
    return;
  }
  const timeoutMs = durationMs(parseDurationSeconds(flags.timeout, '--timeout'), 's');
  // The toy model is served by mass itself, on a loopback port, for the checks; a served model is where it is.
  const served = await kind.serveForChecks();
  const toy = kind.host.standIn !== null;
  try {
    const plan = doctorPlan(config, {
      roles: served.endpoints,
      evaluation: true,
      runtimeLora: kind.runtimeLora,
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
    // What the throughput check measured, for `mass plan`'s wall time (and the plan `mass rsi` prints).
    const record = throughputRecord(report, config.name, new Date());
    if (record) {
      const path = flags.record ?? throughputRecordPath(flags.runs, config.name);
      await writeThroughputRecord(path, record);
      (flags.json ? process.stderr : process.stdout).write(
        `Throughput recorded in ${path}: mass plan --config ${flags.config} takes its wall time from it.\n`,
      );
    }
    if (report.failed) process.exitCode = 2;
  } finally {
    await served.close();
  }
}
