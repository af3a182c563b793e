import type { FaultPlanInput } from '../config/fault-plan.js';
import { doctorProbeOf, doctorProbeTurn } from '../toy/doctor-probe.js';
import type { FaultInjector } from '../toy/fault-injection.js';
import { ReplyServer, type ReceivedRequest } from '../toy/reply-server.js';
import type { ServerFlags } from '../toy/server-flags.js';
import type { Step } from '../toy/steps.js';
import { strictRejection, type StrictMode, type StrictProvider } from './strict-requests.js';

/** A request as the scripted server received it. */
export type ScriptedRequest = ReceivedRequest;

export type Responder = (request: ScriptedRequest) => Step | Promise<Step>;

export interface ScriptedServerOptions {
  /** Steps answered in order, before the responder is asked. */
  script?: Step[];
  /** Answers requests once the script is used up. */
  responder?: Responder;
  /** Served by `/v1/models`; when given, a request for any other model gets a 404 like vLLM's. */
  models?: string[];
  host?: string;
  port?: number;
  /** Characters per streamed delta (default 16). */
  chunkSize?: number;
  /** Field name for reasoning deltas: vLLM's `reasoning_content` (default) or the newer `reasoning`. */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /** Refuse what the provider's real API refuses, with its 400 (`src/testing/strict-requests.ts`). */
  strict?: StrictProvider | StrictMode;
  /** The context length `/v1/models` lists for every model (vLLM's `max_model_len`); strict mode enforces it. */
  maxModelLength?: number;
  /** Answer a share of chat requests with injected faults (`src/toy/fault-injection.ts`). */
  faults?: FaultPlanInput;
  /**
   * How the emulated vLLM was started (`src/toy/server-flags.ts`): a flag left out changes every answer as it would
   * on vLLM (tool calls left as text, reasoning inline, no usage chunk, the seed ignored, LoRA routes). Default:
   * every flag given, no runtime LoRA routes.
   */
  flags?: ServerFlags;
}

/** The flags a correctly started vLLM has for mass, runtime LoRA included: `mass doctor` passes against them. */
export const WELL_CONFIGURED: Required<ServerFlags> = {
  toolCalls: 'parsed',
  reasoning: 'parsed',
  streamUsage: true,
  seed: 'honoured',
  runtimeLora: 'enabled',
};

/** One misconfiguration of each kind that `mass doctor` names a fix for, by what is missing. */
export const MISCONFIGURED = {
  'no-tool-parser': { toolCalls: 'text' },
  'no-auto-tool-choice': { toolCalls: 'refused' },
  'no-reasoning-parser': { reasoning: 'inline' },
  'no-stream-usage': { streamUsage: false },
  'seed-ignored': { seed: 'ignored' },
  'no-lora-routes': { runtimeLora: 'absent' },
  'lora-not-enabled': { runtimeLora: 'not-enabled' },
} as const satisfies Record<string, ServerFlags>;

export class ScriptExhaustedError extends Error {}

/**
 * The tests' model server: the toy's reply server answering from a script, then a responder, recording every
 * request it receives; strict mode refuses what a real provider's API refuses.
 */
export class ScriptedServer {
  readonly requests: ScriptedRequest[] = [];
  /** Requests that found no step to answer them (each answered with a 500). */
  readonly unanswered: ScriptedRequest[] = [];
  /** Requests strict mode refused (each answered with the provider's 400). */
  readonly rejected: ScriptedRequest[] = [];
  /**
   * `mass doctor`'s probes: answered by the toy model's probe answers (through the server's flags) before the
   * script, the responder and the faults, and kept here rather than in `requests`, so that a test's script and counts
   * are those of the run alone.
   */
  readonly probes: ScriptedRequest[] = [];
  private readonly queue: Step[];
  private server!: ReplyServer;

  private constructor(private readonly options: ScriptedServerOptions) {
    this.queue = [...(options.script ?? [])];
  }

  static async start(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
    const scripted = new ScriptedServer(options);
    const { strict } = options;
    const mode =
      strict === undefined ? undefined : typeof strict === 'string' ? { provider: strict } : strict;
    scripted.server = await ReplyServer.start({
      name: 'scripted',
      models: options.models,
      host: options.host,
      port: options.port,
      chunkSize: options.chunkSize,
      reasoningField: options.reasoningField,
      maxModelLength: options.maxModelLength,
      faults: options.faults,
      flags: options.flags,
      onRequest: (request) =>
        (doctorProbeOf(request.body) ? scripted.probes : scripted.requests).push(request),
      answerFirst: (request) => {
        const probe = doctorProbeOf(request.body);
        return probe ? doctorProbeTurn(probe, request.body) : undefined;
      },
      refuse: mode
        ? (request) => {
            const rejection = strictRejection(mode, {
              body: request.body,
              headers: request.headers,
              maxModelLength: options.maxModelLength,
            });
            if (rejection) scripted.rejected.push(request);
            return rejection ?? undefined;
          }
        : undefined,
      responder: async (request) => {
        const step = scripted.queue.shift() ?? (await options.responder?.(request));
        if (!step) scripted.unanswered.push(request);
        return step;
      },
    });
    return scripted;
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    return this.server.url;
  }

  /** The OpenAI-style base URL, ending in `/v1`. */
  get baseUrl(): string {
    return this.server.baseUrl;
  }

  /** The faults this server injects, when its options ask for some. */
  get faults(): FaultInjector | null {
    return this.server.faults;
  }

  enqueue(...steps: Step[]): void {
    this.queue.push(...steps);
  }

  /** Steps scripted but not used yet. */
  get remaining(): number {
    return this.queue.length;
  }

  /** Throws when a request found no step, or when scripted steps were never used. */
  assertDone(): void {
    if (this.unanswered.length > 0) {
      const first = this.unanswered[0]!;
      throw new ScriptExhaustedError(
        `scripted server: ${this.unanswered.length} request(s) had no step left, the first #${first.index} ${first.method} ${first.path}`,
      );
    }
    if (this.queue.length > 0)
      throw new ScriptExhaustedError(`scripted server: ${this.queue.length} step(s) never used`);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

export function startScriptedServer(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  return ScriptedServer.start(options);
}
