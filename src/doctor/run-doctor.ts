import type { RunConfig } from '../config/run-config.js';
import { errorMessage } from '../errors.js';
import { apiKeyFrom } from '../model/create-model.js';
import { check, type CheckResult, type DoctorReport, type EndpointReport } from './check-report.js';
import type { DoctorPlan, EndpointUnderCheck } from './doctor-plan.js';
import { checkContext } from './context-check.js';
import { checkListing, type ListingMode } from './listing-check.js';
import { checkRuntimeLora } from './lora-check.js';
import { checkSeed } from './seed-check.js';
import { checkSleepRoutes } from './sleep-check.js';
import { shownUrl, type ServerTarget } from './server-wire.js';
import { checkStreamedReply } from './streamed-reply-check.js';
import { checkThroughput } from './throughput-check.js';
import { checkToolCalls } from './tool-call-check.js';

export interface DoctorOptions {
  config: RunConfig;
  plan: DoctorPlan;
  /** `full`: every check (`mass doctor`); `pre-start`: the quick ones before a run (no seed, no throughput). */
  depth: 'full' | 'pre-start';
  listing: ListingMode;
  /** Check the runtime LoRA routes where the plan deploys adapters (`mass rsi`, `mass eval`, `mass doctor`). */
  runtimeLora: boolean;
  /** Each request's time limit (default 120 s: a loaded server may take a while to answer a probe). */
  timeoutMs?: number;
}

/** Every endpoint of the plan checked, the endpoints side by side, each one's checks in order. */
export async function runDoctor(options: DoctorOptions): Promise<EndpointReport[]> {
  return Promise.all(options.plan.endpoints.map((endpoint) => checkEndpoint(endpoint, options)));
}

async function checkEndpoint(endpoint: EndpointUnderCheck, options: DoctorOptions): Promise<EndpointReport> {
  let throughput: EndpointReport['throughput'];
  const report = (checks: CheckResult[]): EndpointReport => ({
    baseUrl: shownUrl(endpoint.baseUrl),
    model: endpoint.model,
    roles: endpoint.roles,
    checks,
    ...(throughput ? { throughput } : {}),
  });
  let apiKey: string | undefined;
  try {
    apiKey = apiKeyFrom(endpoint.apiKeyEnv);
  } catch (error) {
    return report([
      check.fail('served', errorMessage(error), `export ${endpoint.apiKeyEnv}=<the server's key>`),
    ]);
  }
  const target: ServerTarget = { baseUrl: endpoint.baseUrl, apiKey, timeoutMs: options.timeoutMs ?? 120_000 };
  const listing = await checkListing(target, endpoint, options.listing);
  const checks = [listing.result];
  const model = listing.probeModel;
  if (model === null) return report(checks);
  checks.push(checkContext(options.config, endpoint, listing.servedContext));
  if (endpoint.team) checks.push(await checkToolCalls(target, model, endpoint));
  checks.push(...(await checkStreamedReply(target, model, endpoint)));
  const full = options.depth === 'full';
  if (full) checks.push(await checkSeed(target, model, endpoint, options.config.seed));
  if (endpoint.runtimeLora && options.runtimeLora) {
    checks.push(await checkRuntimeLora(target, options.plan.loraRank));
  }
  if (endpoint.roles.includes('executor') && options.config.rsi.sleepDuringTraining) {
    checks.push(await checkSleepRoutes(target));
  }
  if (full && endpoint.team) {
    const measured = await checkThroughput(target, model, endpoint, options.plan);
    checks.push(measured.result);
    throughput = measured.measured ?? undefined;
  }
  return report(checks);
}

export function doctorReport(options: {
  kind: 'served' | 'toy';
  note: string | null;
  endpoints: EndpointReport[];
  plan: DoctorPlan;
}): DoctorReport {
  return {
    kind: 'doctor-report',
    schemaVersion: 1,
    model: options.kind,
    note: options.note,
    endpoints: options.endpoints,
    notProbed: options.plan.notProbed,
    failed: options.endpoints.some((endpoint) => endpoint.checks.some((result) => result.verdict === 'fail')),
  };
}
