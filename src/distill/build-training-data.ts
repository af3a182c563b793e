import type { Thread } from '../records/threads.js';
import { UserError } from '../errors.js';
import type { ChatTemplateModel } from './chat-template-model.js';
import type { EpisodeSource } from './episode-source.js';
import { rewriteHostPaths } from './host-path-rewrite.js';
import { DEFAULT_WINDOW_LIMITS, planWindows, windowTokens, type WindowLimits } from './pack-windows.js';
import { querySegments, type QuerySegment } from './query-segments.js';
import type { SkippedItem } from '../records/skipped-item.js';
import { TokenCache } from './token-cache.js';
import { StatsTally, type TrainingDataStats } from '../records/training-data-stats.js';
import { conversationsOfThread, type TrainingConversation } from './training-conversation.js';
import type { Provenance, SftConversation, TrainingWindow } from '../records/training-records.js';
import { argumentsKeptAsText, toTemplateMessage } from './template-messages.js';

/** Where the builder puts what it makes; the files in `mass data build`, a counter in the benchmark. */
export interface TrainingDataSink {
  window(window: TrainingWindow): void | Promise<void>;
  conversation(conversation: SftConversation): void | Promise<void>;
}

export interface BuildTrainingDataOptions {
  model: ChatTemplateModel;
  limits?: Partial<WindowLimits>;
  /**
   * `team` (default): every thread, the orchestrator's workflow prompt replaced by the bare task. `single-agent`:
   * bare-task episodes, the orchestrator's thread only (the baseline of the multi- vs single-agent comparison).
   */
  mode?: 'team' | 'single-agent';
  /** How much of the chat-template split to prove by re-rendering (see `querySegments`). */
  verify?: 'final-turn' | 'every-turn';
  sink: TrainingDataSink;
}

/**
 * Training data from episodes: each thread's conversations, each user query rendered with the model's chat template
 * and tokenised, cut into windows labelled only on the model's own outputs. Returns exact statistics of what went
 * to the sink and of everything left out, with the reason.
 */
export async function buildTrainingData(
  episodes: Iterable<EpisodeSource> | AsyncIterable<EpisodeSource>,
  options: BuildTrainingDataOptions,
): Promise<TrainingDataStats> {
  const limits = { ...DEFAULT_WINDOW_LIMITS, ...options.limits };
  checkLimits(limits);
  const mode = options.mode ?? 'team';
  const tally = new StatsTally();
  const tokens = new TokenCache(options.model);
  const seen = new Set<string>();
  const build: Build = { options, limits, tally, tokens };

  for await (const episode of episodes) {
    if (seen.has(episode.episodeId)) {
      throw new UserError(
        `episode ${episode.episodeId} is given twice; each episode belongs to one split, once`,
      );
    }
    seen.add(episode.episodeId);
    if (mode === 'single-agent' && episode.team) {
      throw new UserError(
        `episode ${episode.episodeId} ran with a team workflow or the teacher directive; single-agent data comes from bare-task episodes`,
      );
    }
    const { split, taskId: task } = episode;
    tally.episode(split);
    const { threads, rewrites } = rewriteHostPaths(episode);
    tally.hostPaths(split, rewrites);
    for (const thread of threads) {
      if (thread.forged === true) {
        tally.skip(split, [
          {
            episode: episode.episodeId,
            thread: thread.threadId,
            role: thread.role,
            reason: 'forged',
            detail:
              'agent code posted these requests to the proxy; the harness never built this conversation',
          },
        ]);
        continue;
      }
      if (mode === 'single-agent' && thread.role !== 'orchestrator') {
        tally.skip(split, [
          {
            episode: episode.episodeId,
            thread: thread.threadId,
            role: thread.role,
            reason: 'not-orchestrator',
            detail: 'single-agent data keeps the orchestrator thread only',
          },
        ]);
        continue;
      }
      tally.add(split, task, thread.role, { threads: 1 });
      const { conversations, skipped, truncatedResponses } = conversationsOfThread(thread, {
        episodeId: episode.episodeId,
        taskId: task,
        taskPrompt:
          thread.role === 'orchestrator' ? { prompt: episode.prompt, bareTask: episode.bareTask } : undefined,
      });
      tally.truncated(split, truncatedResponses);
      tally.skip(split, skipped);
      tokens.clear();
      for (const conversation of conversations) {
        await buildConversation(build, episode, thread, conversation);
      }
    }
  }
  return {
    model: options.model.name,
    mode,
    limits,
    splits: tally.splits,
  };
}

/** What one build shares across its episodes. */
interface Build {
  options: BuildTrainingDataOptions;
  limits: WindowLimits;
  tally: StatsTally;
  tokens: TokenCache;
}

/**
 * One conversation of a thread: its tool calls counted, each user query rendered and cut into windows for the sink,
 * with its conversation; what cannot be used is tallied with the reason.
 */
async function buildConversation(
  build: Build,
  episode: EpisodeSource,
  thread: Thread,
  conversation: TrainingConversation,
): Promise<void> {
  const { options, limits, tally, tokens } = build;
  const { split, taskId: task } = episode;
  tally.add(split, task, thread.role, { conversations: 1 });
  for (const messageIndex of conversation.targets) {
    const message = toTemplateMessage(conversation.messages[messageIndex]!);
    tally.toolCalls(split, message.tool_calls?.length ?? 0, argumentsKeptAsText(message), {
      episode: episode.episodeId,
      thread: thread.threadId,
      threadSegment: conversation.threadSegment,
      messageIndex,
    });
  }
  const skippedHere: SkippedItem[] = [];
  for (const result of querySegments(conversation, options.model, tokens, { verify: options.verify })) {
    const where = {
      episode: episode.episodeId,
      thread: thread.threadId,
      role: thread.role,
      threadSegment: conversation.threadSegment,
      querySegment: result.ok ? result.segment.index : result.index,
    };
    if (!result.ok) {
      skippedHere.push({ ...where, reason: 'render-mismatch', detail: result.error });
      continue;
    }
    const { segment } = result;
    const plan = planWindows(segment, limits);
    if (!plan.ok) {
      skippedHere.push({
        ...where,
        reason: 'header-too-long',
        supervisedTokens: supervisedTokensOf(segment),
        detail: plan.error,
      });
      continue;
    }
    for (const turn of plan.skippedTurns) {
      skippedHere.push({
        ...where,
        reason: 'turn-too-long',
        messageIndex: turn.messageIndex,
        supervisedTokens: turn.supervisedTokens,
        detail: `the turn has ${turn.tokens} tokens; with the header it does not fit in a ${limits.windowTokens}-token window`,
      });
    }
    if (plan.windows.length === 0) continue;
    const id = `${episode.episodeId}/${thread.threadId}/${conversation.threadSegment}/${segment.index}`;
    const provenance = {
      id,
      split,
      episode: episode.episodeId,
      task,
      role: thread.role,
      thread: thread.threadId,
      threadSegment: conversation.threadSegment,
      querySegment: segment.index,
    };
    for (const [index, layout] of plan.windows.entries()) {
      const { inputIds, labels } = windowTokens(segment, layout);
      await options.sink.window({
        schemaVersion: 1,
        ...provenance,
        id: `${id}/${index}`,
        window: index,
        windowsInQuerySegment: plan.windows.length,
        targets: layout.targets,
        tokens: layout.tokens,
        supervisedTokens: layout.supervisedTokens,
        input_ids: inputIds,
        labels,
      });
      tally.add(split, task, thread.role, {
        windows: 1,
        tokens: layout.tokens.total,
        supervisedTokens: layout.supervisedTokens,
      });
    }
    tally.add(split, task, thread.role, { querySegments: 1 });
    await options.sink.conversation(exportConversation(conversation, segment, provenance));
  }
  tally.skip(split, skippedHere);
}

function checkLimits(limits: WindowLimits): void {
  const { windowTokens, maxContextTokens, maxHeaderFraction } = limits;
  if (!Number.isInteger(windowTokens) || windowTokens <= 0) {
    throw new UserError(`window ${windowTokens}: use a positive whole number of tokens`);
  }
  if (!Number.isInteger(maxContextTokens) || maxContextTokens < 0) {
    throw new UserError(`max context ${maxContextTokens}: use a whole number of tokens, 0 or more`);
  }
  if (!(maxHeaderFraction > 0 && maxHeaderFraction <= 1)) {
    throw new UserError(`header fraction ${maxHeaderFraction}: use a number above 0 and at most 1`);
  }
}

function supervisedTokensOf(segment: QuerySegment): number {
  return segment.blocks.reduce(
    (sum, block) => sum + (block.supervised ? block.supervised.to - block.supervised.from : 0),
    0,
  );
}

function exportConversation(
  conversation: TrainingConversation,
  segment: QuerySegment,
  provenance: Provenance,
): SftConversation {
  return {
    messages: conversation.messages.slice(0, segment.endMessageIndex).map(toTemplateMessage),
    tools: conversation.tools,
    metadata: { schemaVersion: 1, ...provenance, targets: segment.targets },
  };
}
