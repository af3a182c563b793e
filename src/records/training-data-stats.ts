import { z } from 'zod';

import { defineRecord } from '../store/record.js';
import { HostPathRewrite } from './host-path-rewrite.js';
import { SkippedItem } from './skipped-item.js';
import { TokenizerCheckResult } from './tokenizer-check.js';
import { DataSplit, type ConversationRole } from './training-records.js';

const Count = z.number().int().nonnegative();

export const DataCounts = z.object({
  threads: Count,
  /** Thread segments turned into conversations. */
  conversations: Count,
  /** Query segments that gave at least one window. */
  querySegments: Count,
  windows: Count,
  /** Every token of every window. */
  tokens: Count,
  /** Tokens with a label: the model's own outputs. */
  supervisedTokens: Count,
});
export type DataCounts = z.infer<typeof DataCounts>;

const RoleCounts = z.object({ orchestrator: DataCounts, subagent: DataCounts, auxiliary: DataCounts });

/** A trained assistant turn of an episode's thread. */
const TurnLocation = z.object({
  episode: z.string(),
  thread: z.string(),
  threadSegment: z.number().int(),
  messageIndex: z.number().int(),
});

export const ToolCallCounts = z.object({
  /** Tool calls in trained turns. */
  calls: Count,
  /** Of those, calls whose arguments were not a JSON object: the template was given the recorded text. */
  argumentsAsText: Count,
  /** The trained turns holding such a call. */
  turnsWithTextArguments: z.array(TurnLocation),
});
export type ToolCallCounts = z.infer<typeof ToolCallCounts>;

export const SplitStats = z.object({
  episodes: Count,
  total: DataCounts,
  perRole: RoleCounts,
  perTask: z.record(z.string(), z.object({ total: DataCounts, perRole: RoleCounts })),
  /** Responses cut by the length limit: never trained on. */
  truncatedResponses: Count,
  /** Absent in data built before arguments were parsed into objects. */
  toolCalls: ToolCallCounts.optional(),
  skipped: z.array(SkippedItem),
  /** Host paths replaced by the sandbox's fixed ones (absent in data built before the replacement). */
  hostPaths: z.array(HostPathRewrite).optional(),
});
export type SplitStats = z.infer<typeof SplitStats>;

/** `stats.json`: exact counts of what the builder wrote, per split, role and task, and everything it left out. */
export const TrainingDataStats = defineRecord({
  kind: 'training-data-stats',
  version: 1,
  schema: z.object({
    model: z.string(),
    /** The tokenizer compared with the served model's name (absent in data built before the comparison). */
    tokenizer: TokenizerCheckResult.optional(),
    /** `team` (the orchestrator's workflow prompt replaced by the bare task) or `single-agent` (bare episodes). */
    mode: z.enum(['team', 'single-agent']),
    limits: z.object({
      windowTokens: z.number().int().positive(),
      maxContextTokens: z.number().int().nonnegative(),
      maxHeaderFraction: z.number().positive().max(1),
    }),
    splits: z.record(DataSplit, SplitStats),
  }),
});
export type TrainingDataStats = z.infer<(typeof TrainingDataStats)['schema']>;

type Role = z.infer<typeof ConversationRole>;

const emptyCounts = (): DataCounts => ({
  threads: 0,
  conversations: 0,
  querySegments: 0,
  windows: 0,
  tokens: 0,
  supervisedTokens: 0,
});
const emptyRoles = () => ({ orchestrator: emptyCounts(), subagent: emptyCounts(), auxiliary: emptyCounts() });
const emptySplit = (): SplitStats => ({
  episodes: 0,
  total: emptyCounts(),
  perRole: emptyRoles(),
  perTask: {},
  truncatedResponses: 0,
  toolCalls: { calls: 0, argumentsAsText: 0, turnsWithTextArguments: [] },
  skipped: [],
  hostPaths: [],
});

/** Adds every count to the split's total, its role, its task and the task's role at once, so they always agree. */
export class StatsTally {
  readonly splits: Record<DataSplit, SplitStats> = { train: emptySplit(), validation: emptySplit() };

  episode(split: DataSplit): void {
    this.splits[split].episodes++;
  }

  add(split: DataSplit, task: string, role: Role, counts: Partial<DataCounts>): void {
    const stats = this.splits[split];
    const perTask = (stats.perTask[task] ??= { total: emptyCounts(), perRole: emptyRoles() });
    for (const target of [stats.total, stats.perRole[role], perTask.total, perTask.perRole[role]]) {
      for (const [key, value] of Object.entries(counts) as Array<[keyof DataCounts, number]>) {
        target[key] += value;
      }
    }
  }

  truncated(split: DataSplit, count: number): void {
    this.splits[split].truncatedResponses += count;
  }

  /** A trained turn's tool calls, `asText` of them with arguments that were not a JSON object. */
  toolCalls(split: DataSplit, calls: number, asText: number, turn: z.infer<typeof TurnLocation>): void {
    const counts = (this.splits[split].toolCalls ??= {
      calls: 0,
      argumentsAsText: 0,
      turnsWithTextArguments: [],
    });
    counts.calls += calls;
    counts.argumentsAsText += asText;
    if (asText > 0) counts.turnsWithTextArguments.push(turn);
  }

  hostPaths(split: DataSplit, rewrites: HostPathRewrite[]): void {
    (this.splits[split].hostPaths ??= []).push(...rewrites);
  }

  skip(split: DataSplit, items: SkippedItem[]): void {
    this.splits[split].skipped.push(...items);
  }
}
