/**
 * The vLLM flags that fix what the checks find, named for the model's family where its name tells it (Qwen's
 * served names do; a generation served under a run's own name does not, and gets the choices).
 */

export function toolParserFor(model: string): string {
  const name = model.toLowerCase();
  if (/qwen3[.-]?(5|6)|qwen3-?coder/.test(name)) return 'qwen3_coder';
  if (/qwen|qwq|hermes/.test(name)) return 'hermes';
  if (/llama-?3/.test(name)) return 'llama3_json';
  if (/mistral|mixtral/.test(name)) return 'mistral';
  return '<the parser of the model family: hermes for Qwen2.5 and Qwen3, qwen3_coder for Qwen3.5/3.6 and Qwen3-Coder>';
}

export function reasoningParserFor(model: string): string {
  const name = model.toLowerCase();
  if (/deepseek-?r1|qwq/.test(name)) return 'deepseek_r1';
  if (/qwen3/.test(name)) return 'qwen3';
  return '<the parser of the model family: qwen3 for Qwen3 and Qwen3.5/3.6, deepseek_r1 for DeepSeek-R1 and QwQ>';
}

export function toolCallFlags(model: string): string {
  return `start vLLM with --enable-auto-tool-choice --tool-call-parser ${toolParserFor(model)}`;
}

export function reasoningFlags(model: string): string {
  return `start vLLM with --reasoning-parser ${reasoningParserFor(model)}`;
}

export function runtimeLoraFlags(loraRank: number): string {
  return `start vLLM with --enable-lora --max-lora-rank ${loraRank} (at least rsi.hyperparameters.loraRank) and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True in its environment, or set rsi.deploy to restart`;
}
