import { z } from 'zod';

/** The split an episode's data goes to. */
export const DataSplit = z.enum(['train', 'validation']);
export type DataSplit = z.infer<typeof DataSplit>;

export const ConversationRole = z.enum(['orchestrator', 'subagent', 'auxiliary']);

/** Where a window or conversation comes from; shared by every file the builder writes. */
export const Provenance = z.object({
  /** `episode/thread/threadSegment/querySegment`, plus `/window` for a window. */
  id: z.string(),
  split: DataSplit,
  episode: z.string(),
  task: z.string(),
  role: ConversationRole,
  thread: z.string(),
  threadSegment: z.number().int().nonnegative(),
  querySegment: z.number().int().nonnegative(),
});

export type Provenance = z.infer<typeof Provenance>;

/** What one window holds, without its tokens: a line of `<split>.index.jsonl`, what the sampler reads. */
export const WindowSummary = Provenance.extend({
  schemaVersion: z.literal(1),
  window: z.number().int().nonnegative(),
  windowsInQuerySegment: z.number().int().positive(),
  /** Message indices (in the conversation export) of the assistant turns trained on. */
  targets: z.array(z.number().int().nonnegative()),
  tokens: z.object({
    header: z.number().int().nonnegative(),
    context: z.number().int().nonnegative(),
    body: z.number().int().nonnegative(),
    total: z.number().int().positive(),
  }),
  supervisedTokens: z.number().int().positive(),
});
export type WindowSummary = z.infer<typeof WindowSummary>;

/** A line of `<split>.windows.jsonl`: a window ready for the trainer, labels -100 except the trained outputs. */
export const TrainingWindow = WindowSummary.extend({
  input_ids: z.array(z.number().int().nonnegative()),
  labels: z.array(z.number().int()),
});
export type TrainingWindow = z.infer<typeof TrainingWindow>;

/**
 * A line of `<split>.conversations.jsonl`: one query segment as TRL's SFTTrainer reads a conversational dataset
 * (`messages` in the OpenAI format with `reasoning_content` and `tool_calls`, and `tools`), the bare task in
 * place of the workflow. The template keeps reasoning only after the last user query, so a conversation ends where
 * its query segment ends; `metadata.targets` names the turns the windows train on (a trainer that trains on every
 * assistant turn also learns the earlier ones, which the windows keep as context).
 */
const SftToolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({
    name: z.string(),
    arguments: z.union([z.record(z.string(), z.unknown()), z.string()]),
  }),
});

export const SftMessage = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  reasoning_content: z.string().optional(),
  /** Arguments as an object (what chat templates read); the recorded string only where it was not a JSON object. */
  tool_calls: z.array(SftToolCall).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
});

export const SftConversation = z.object({
  messages: z.array(SftMessage),
  tools: z.array(z.unknown()),
  metadata: Provenance.extend({
    schemaVersion: z.literal(1),
    targets: z.array(z.number().int().nonnegative()),
  }),
});
export type SftConversation = z.infer<typeof SftConversation>;

/** The files the builder writes into its output directory. */
export function trainingDataFiles(split: DataSplit): {
  windows: string;
  index: string;
  conversations: string;
} {
  return {
    windows: `${split}.windows.jsonl`,
    index: `${split}.index.jsonl`,
    conversations: `${split}.conversations.jsonl`,
  };
}
export const STATS_FILE = 'stats.json';
