import { apiKeyFrom } from '../../model/create-model.js';
import { OpenAICompatibleModel } from '../../model/openai-compatible.js';

export async function modelsAction(options: {
  baseUrl: string;
  apiKeyEnv?: string;
  check?: string;
  json?: boolean;
}): Promise<void> {
  const model = new OpenAICompatibleModel({
    baseUrl: options.baseUrl,
    apiKey: apiKeyFrom(options.apiKeyEnv),
    retry: { maxAttempts: 2 },
  });
  const listed = await model.servedModels();
  const served = listed.map((entry) => entry.id);
  // vLLM lists each model's context (max_model_len): what a run's budgets must fit in.
  const contextLengths = Object.fromEntries(
    listed.flatMap((entry) => (entry.maxModelLength === null ? [] : [[entry.id, entry.maxModelLength]])),
  );
  let check: { model: string; reply: string | null; usage: unknown; latencyMs: number } | undefined;
  if (options.check) {
    const started = performance.now();
    const response = await model.complete({
      model: options.check,
      messages: [{ role: 'user', content: 'Reply with the single word: ready' }],
      sampling: { maxTokens: 64 },
    });
    check = {
      model: options.check,
      reply: typeof response.message.content === 'string' ? response.message.content : null,
      usage: response.usage,
      latencyMs: Math.round(performance.now() - started),
    };
  }
  if (options.json) {
    console.log(JSON.stringify({ baseUrl: options.baseUrl, models: served, contextLengths, check }, null, 2));
    return;
  }
  console.log(
    listed.length > 0
      ? listed
          .map((entry) =>
            entry.maxModelLength === null ? entry.id : `${entry.id}  (max_model_len ${entry.maxModelLength})`,
          )
          .join('\n')
      : '(the server lists no models)',
  );
  if (check)
    console.log(`\n${check.model} answered in ${check.latencyMs} ms: ${JSON.stringify(check.reply)}`);
}
