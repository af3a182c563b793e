import { check, type CheckResult } from './check-report.js';
import { runtimeLoraFlags } from './server-advice.js';
import { errorText, postToRoot, type ServerTarget, type WireAnswer } from './server-wire.js';

/** A name no run serves, so that neither probe can touch a real adapter. */
export const ABSENT_ADAPTER = 'mass-doctor-absent-adapter';
/** A path that exists on no machine: a load from it must fail, whatever the server. */
const ABSENT_PATH = '/nonexistent/mass-doctor-probe/adapter';

/**
 * vLLM's runtime LoRA routes, probed without weights. Without `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True` the routes do
 * not exist: a 404 from the web framework (`{"detail": "Not Found"}`) that names no adapter. With them, unloading an
 * adapter the server does not hold is vLLM's own 404 (or 400) naming it. Then a load from a path that does not exist
 * tells `--enable-lora`: with it the adapter is not found; without it the engine answers "LoRA is not enabled.".
 */
export async function checkRuntimeLora(target: ServerTarget, loraRank: number): Promise<CheckResult> {
  const name = 'runtime LoRA';
  const fix = runtimeLoraFlags(loraRank);
  const unload = await postToRoot(target, '/v1/unload_lora_adapter', { lora_name: ABSENT_ADAPTER });
  if (!unload.ok) return check.fail(name, `POST /v1/unload_lora_adapter failed: ${unload.error}`, fix);
  if (!answersAboutAdapter(unload)) {
    return check.fail(
      name,
      `POST /v1/unload_lora_adapter answered ${unload.status} (${errorText(unload) || 'no message'}): the server has no runtime LoRA routes, so deploying a trained generation would fail after a whole round`,
      fix,
    );
  }
  const load = await postToRoot(target, '/v1/load_lora_adapter', {
    lora_name: ABSENT_ADAPTER,
    lora_path: ABSENT_PATH,
  });
  if (!load.ok) return check.fail(name, `POST /v1/load_lora_adapter failed: ${load.error}`, fix);
  if (load.status === 200) {
    // A server that takes a path it cannot read; give the name back.
    await postToRoot(target, '/v1/unload_lora_adapter', { lora_name: ABSENT_ADAPTER });
    return check.pass(
      name,
      'the load and unload routes answer (a load is not checked against its path here)',
    );
  }
  const message = errorText(load);
  if (/not enabled|enable[-_ ]lora/i.test(message)) {
    return check.fail(name, `POST /v1/load_lora_adapter answered ${load.status}: ${message}`, fix);
  }
  if (/no adapter|not found|does not exist|cannot be found|no such file/i.test(message)) {
    return check.pass(
      name,
      `the load and unload routes answer, and LoRA is enabled (a load from a missing path: ${load.status}, adapter not found)`,
    );
  }
  return check.warn(
    name,
    `the routes answer, but a load from a missing path answered ${load.status}: ${message}`,
    `if LoRA is not enabled: ${fix}`,
  );
}

/** An answer of vLLM's own about the probe's adapter, rather than a route that does not exist. */
function answersAboutAdapter(answer: Extract<WireAnswer, { ok: true }>): boolean {
  if (answer.status === 200) return true;
  if (answer.status >= 500 || answer.status === 405) return false;
  return answer.text.includes(ABSENT_ADAPTER);
}
