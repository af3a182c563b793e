import type { Command } from 'commander';

import { apiKeyFrom } from '../../model/create-model.js';
import { OpenAICompatibleModel } from '../../model/openai-compatible.js';

export function registerModels(program: Command): void {
  program
    .command('models')
    .description('List the models an OpenAI-compatible server serves, and check that one answers')
    .requiredOption('--base-url <url>', 'OpenAI-style base URL ending in /v1, e.g. http://127.0.0.1:8000/v1')
    .option('--api-key-env <variable>', 'environment variable holding the API key')
    .option(
      '--check <model>',
      'also send a one-line request to this model and report its answer, usage and latency',
    )
    .option('--json', 'print JSON')
    .action(async (options: { baseUrl: string; apiKeyEnv?: string; check?: string; json?: boolean }) => {
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
        console.log(
          JSON.stringify({ baseUrl: options.baseUrl, models: served, contextLengths, check }, null, 2),
        );
        return;
      }
      console.log(
        listed.length > 0
          ? listed
              .map((entry) =>
                entry.maxModelLength === null
                  ? entry.id
                  : `${entry.id}  (max_model_len ${entry.maxModelLength})`,
              )
              .join('\n')
          : '(the server lists no models)',
      );
      if (check)
        console.log(`\n${check.model} answered in ${check.latencyMs} ms: ${JSON.stringify(check.reply)}`);
    });
}
