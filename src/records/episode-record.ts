import { z } from 'zod';

import { CallCost } from '../model/types.js';
import { defineRecord } from '../store/record.js';
import { CapturedOutput } from '../harness/captured-output.js';
import { HarnessTexts } from '../harness/harness-texts.js';
import { EgressCounts } from '../proxy/egress-log.js';
import { EpisodeFailure } from './episode-failure.js';

const TokenTotals = z.object({
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  reasoningTokens: z.number().int().nonnegative(),
});

export const ProtectedAssetCheck = z.object({
  path: z.string(),
  before: z.string().nullable(),
  after: z.string().nullable(),
});

/**
 * `episode.json`: what one run of a team on one task did, written last, once everything else is on disk. Version 1
 * had one seed for both the data and the sampling; it reads as version 2 with the data seed equal to the seed.
 * Version 3 takes its counts from the proxy log alone, leaves out the requests agent code posted itself (`forged`)
 * and says what became of the harness's output (`harnessOutput`); both are absent in older records.
 */
export const EpisodeRecord = defineRecord({
  kind: 'episode',
  version: 3,
  migrate: (body, fromVersion) => (fromVersion === 1 ? { ...body, dataSeed: body.seed } : body),
  schema: z.object({
    episodeId: z.string(),
    task: z.object({ id: z.string(), dir: z.string() }),
    /** Null for a bare-task episode. */
    workflowHash: z.string().nullable(),
    teacher: z.boolean(),
    /** The sampling seed of every model call. */
    seed: z.number().int(),
    /** The seed the workspace's data was generated from; the grader needs it. */
    dataSeed: z.number().int(),
    model: z.string(),
    /** The model server's base URL; never a key. */
    baseUrl: z.string(),
    status: z.enum(['success', 'failure']),
    failure: EpisodeFailure.nullable(),
    timings: z.object({
      startedAt: z.string(),
      endedAt: z.string(),
      durationMs: z.number(),
      /** From the harness's start to its end, inside the sandbox. */
      harnessMs: z.number(),
    }),
    /** The harness's conversations; what agent code's own requests cost is `forged.usage` (version 3 on). */
    usage: z.object({
      total: TokenTotals,
      perThread: z.array(
        TokenTotals.extend({
          threadId: z.string(),
          role: z.enum(['orchestrator', 'subagent', 'auxiliary']),
          calls: z.number().int(),
        }),
      ),
      /** Prompt tokens the provider served from its cache, when it reported any (absent otherwise). */
      cachedPromptTokens: z.number().int().nonnegative().optional(),
    }),
    /**
     * What the harness's calls cost, as their provider reported it for every billed call (OpenRouter's `usage.cost`);
     * absent otherwise (and in older records): sums compute it from the tokens at the executor's prices.
     */
    cost: CallCost.optional(),
    /** The harness's chat requests (failed ones included); not those agent code posted itself. */
    modelCalls: z.number().int(),
    failedModelCalls: z.number().int(),
    /** Calls the proxy had to retry (their server failed before the harness got a byte); 0 in older records. */
    retriedModelCalls: z.number().int().optional(),
    /** `agent` calls in the orchestrator's responses, as the proxy recorded them. */
    delegations: z.number().int(),
    /**
     * Chat requests agent code posted to the proxy (their context was not built by the harness and the model), and
     * the conversations they formed: in no other count, no judge's evidence and no training data.
     */
    forged: z
      .object({
        requests: z.number().int().nonnegative(),
        threads: z.number().int().nonnegative(),
        usage: TokenTotals,
      })
      .optional(),
    /** The harness's output as the host captured it from its pipes (agent code can write into them too). */
    harnessOutput: z
      .object({
        events: CapturedOutput,
        stderr: CapturedOutput,
        /** Lines of `events.jsonl` that were no harness event. */
        unreadableEventLines: z.number().int().nonnegative(),
      })
      .optional(),
    integrity: z.object({
      assets: z.array(ProtectedAssetCheck),
      tampered: z.boolean(),
      tamperedPaths: z.array(z.string()),
    }),
    sandbox: z.object({
      enabled: z.boolean(),
      exitCode: z.number().int().nullable(),
      signal: z.string().nullable(),
      limitExceeded: z.enum(['wall-clock', 'cpu-time', 'memory', 'processes', 'disk']).nullable(),
      cpuSeconds: z.number(),
      peakMemoryBytes: z.number(),
      /**
       * The workspace and the home as the agents saw them: `/workspace` and `/home/agent` in a sandbox, the host's
       * paths without one. Absent in records written before the sandbox fixed them (the host's, then).
       */
      workspacePath: z.string().optional(),
      homePath: z.string().optional(),
      /** The host GPU the episode had to itself (`/dev/nvidia<gpu>`); absent without one (and in older records). */
      gpu: z.number().int().nonnegative().optional(),
    }),
    /**
     * What the agents reached beyond the model, when the task allowed network: its allow-list and the egress proxy's
     * counts (`egress.jsonl` has a row per request). Absent when the task allowed none (and in older records).
     * `anyPublicHost`: the run gave every public host (a public benchmark's task that asks for the internet), with
     * an empty allow-list.
     */
    egress: EgressCounts.extend({
      allow: z.array(z.string()),
      anyPublicHost: z.literal(true).optional(),
    }).optional(),
    harness: z.object({
      name: z.literal('qwen-code'),
      version: z.string(),
      /** The Node it ran on (`22.23.5`); absent in records written before the harness had a Node of its own. */
      nodeVersion: z.string().optional(),
      /** Its tool and skill profile (`lean`, `stock`); absent in older records (`stock`, then). */
      profile: z.enum(['lean', 'stock']).optional(),
      /** Which of its texts were in force (system prompt, sandbox marker, shell limits, tools); absent in older records. */
      texts: HarnessTexts.optional(),
    }),
  }),
});
export type EpisodeRecord = z.infer<(typeof EpisodeRecord)['schema']>;
