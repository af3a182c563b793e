import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for a vLLM server's model-management surface, which the scripted server does not have (it answers 404
 * to any other POST path): `GET /v1/models` with `root` (the weights' or adapter's path) and `parent` (an adapter's
 * base model), vLLM's runtime-LoRA API (`POST /v1/load_lora_adapter` with `{lora_name, lora_path}`, `POST
 * /v1/unload_lora_adapter` with `{lora_name}`), a minimal `POST /v1/chat/completions`, and `POST /_test/restart` for
 * restart commands to call.
 */
export interface FakeVllmOptions {
  /** Models served from the start (their `root` is `/models/<id>`). */
  models: string[];
  /**
   * Answer runtime-LoRA endpoints (vLLM with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True); adapters are
   * loaded over the first model.
   */
  runtimeLora?: boolean;
  /** Refuse adapters with this message (as vLLM does for a rank above --max-lora-rank). */
  refuseAdapters?: string;
  /** Every request must carry this bearer key, else 401. */
  apiKey?: string;
  /** After a restart, answer this many requests with 503 (the server is starting) before serving the new model. */
  startingRequests?: number;
  /**
   * Answer sleep mode's routes (vLLM with --enable-sleep-mode and VLLM_SERVER_DEV_MODE=1): `POST /sleep?level=N`,
   * `POST /wake_up`, `GET /is_sleeping`; while asleep, chat requests fail with 503.
   */
  sleepMode?: boolean;
  /**
   * `POST /v1/completions` with `prompt_logprobs`: the log-probability of each prompt token after the first under
   * `model`, or undefined to answer 404 as for an unknown model.
   */
  promptLogprobs?: (model: string, tokens: number[]) => number[] | undefined;
}

export interface FakeVllmRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeVllm {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  url: string;
  requests: FakeVllmRequest[];
  /** What it serves now, as `GET /v1/models` lists it. */
  models(): Array<{ id: string; root: string; parent: string | null }>;
  close(): Promise<void>;
}

export async function startFakeVllm(options: FakeVllmOptions): Promise<FakeVllm> {
  const served = new Map<string, { root: string; parent: string | null }>(
    options.models.map((id) => [id, { root: `/models/${id}`, parent: null }]),
  );
  let startingRequests = 0;
  let sleeping = false;
  const requests: FakeVllmRequest[] = [];

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text === '' ? undefined : (JSON.parse(text) as Record<string, string>);
      const path = request.url ?? '/';
      requests.push({ method: request.method ?? 'GET', path, headers: request.headers, body });
      const send = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(typeof value === 'string' ? value : JSON.stringify(value));
      };
      if (options.apiKey && request.headers.authorization !== `Bearer ${options.apiKey}`) {
        return send(401, { error: 'Unauthorized' });
      }
      if (path === '/_test/restart') {
        served.clear();
        served.set(body!.served_as!, { root: body!.model_path!, parent: null });
        startingRequests = options.startingRequests ?? 0;
        return send(200, { ok: true });
      }
      if (startingRequests > 0) {
        startingRequests--;
        return send(503, { error: { message: 'the server is starting' } });
      }
      if (options.sleepMode && request.method === 'GET' && path === '/is_sleeping') {
        return send(200, { is_sleeping: sleeping });
      }
      if (options.sleepMode && request.method === 'POST' && /^\/sleep(\?level=[12])?$/.test(path)) {
        sleeping = true;
        return send(200, '');
      }
      if (options.sleepMode && request.method === 'POST' && path === '/wake_up') {
        sleeping = false;
        return send(200, '');
      }
      if (request.method === 'GET' && path === '/v1/models') {
        return send(200, {
          object: 'list',
          data: [...served].map(([id, model]) => ({ id, object: 'model', ...model })),
        });
      }
      if (request.method === 'POST' && path === '/v1/load_lora_adapter' && options.runtimeLora) {
        if (options.refuseAdapters) {
          return send(400, {
            object: 'error',
            message: options.refuseAdapters,
            type: 'BadRequestError',
            code: 400,
          });
        }
        if (served.has(body!.lora_name!)) {
          return send(400, { message: `The lora adapter '${body!.lora_name}' has already been loaded.` });
        }
        served.set(body!.lora_name!, { root: body!.lora_path!, parent: options.models[0]! });
        return send(200, `Success: LoRA adapter '${body!.lora_name}' added successfully.`);
      }
      if (request.method === 'POST' && path === '/v1/unload_lora_adapter' && options.runtimeLora) {
        const adapter = served.get(body!.lora_name!);
        if (!adapter || adapter.parent === null) {
          return send(404, {
            object: 'error',
            message: `The lora adapter '${body!.lora_name}' cannot be found.`,
            type: 'NotFoundError',
            code: 404,
          });
        }
        served.delete(body!.lora_name!);
        return send(200, `Success: LoRA adapter '${body!.lora_name}' removed successfully.`);
      }
      if (request.method === 'POST' && path === '/v1/completions' && options.promptLogprobs) {
        const { model, prompt } = body as unknown as { model: string; prompt: number[] };
        const logprobs = served.has(model) ? options.promptLogprobs(model, prompt) : undefined;
        if (!logprobs) return send(404, { error: { message: `The model \`${model}\` does not exist.` } });
        const rows = [
          null,
          ...prompt.slice(1).map((token, index) => ({ [token]: { logprob: logprobs[index], rank: 1 } })),
        ];
        return send(200, {
          id: 'fake',
          object: 'text_completion',
          model,
          choices: [{ index: 0, text: 'x', prompt_logprobs: rows }],
        });
      }
      if (request.method === 'POST' && path === '/v1/chat/completions') {
        if (sleeping) return send(503, { error: { message: 'the engine is sleeping' } });
        if (!served.has(body!.model!)) {
          return send(404, { error: { message: `The model \`${body!.model}\` does not exist.` } });
        }
        return send(200, {
          id: 'fake',
          object: 'chat.completion',
          model: body!.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'OK' }, finish_reason: 'stop' }],
        });
      }
      return send(404, { detail: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    models: () => [...served].map(([id, model]) => ({ id, ...model })),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
