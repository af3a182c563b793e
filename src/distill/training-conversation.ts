import type { Thread } from '../records/threads.js';
import type { ThreadRole } from '../harness/qwen-code.js';
import type { ChatMessage, ToolDefinition } from '../model/types.js';
import { replaceTaskPrompt } from './replace-task-prompt.js';
import type { SkippedItem } from '../records/skipped-item.js';

/** One uninterrupted conversation of a thread, ready to render: what the model saw and which turns it learns. */
export interface TrainingConversation {
  episodeId: string;
  taskId: string;
  role: ThreadRole;
  threadId: string;
  /** Index of the thread's segment (a new one starts wherever the harness rewrote the history). */
  threadSegment: number;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  /**
   * Indices of the assistant messages that are the model's own complete responses: the only turns it is trained
   * on. Harness-made assistant messages and responses cut by the length limit are never targets.
   */
  targets: number[];
}

export interface ThreadConversations {
  conversations: TrainingConversation[];
  skipped: SkippedItem[];
  /** Responses cut by the output limit (`finish_reason: "length"`), none of them trained on. */
  truncatedResponses: number;
}

export interface ConversationContext {
  episodeId: string;
  taskId: string;
  /**
   * For the orchestrator: the prompt the episode was given and the bare task that replaces it. Absent for other
   * roles, whose messages are never changed.
   */
  taskPrompt?: { prompt: string; bareTask: string };
}

/**
 * The conversations of one thread. A truncated final response is dropped; one the conversation went on after
 * stays as context (the model saw it) but is not a target. In the orchestrator's first user message the episode's
 * prompt is replaced by the bare task; if it cannot be found in any segment the whole thread is skipped rather
 * than trained on the workflow text.
 */
export function conversationsOfThread(thread: Thread, context: ConversationContext): ThreadConversations {
  const conversations: TrainingConversation[] = [];
  let truncatedResponses = 0;
  for (const [threadSegment, segment] of thread.segments.entries()) {
    let messages: ChatMessage[] = segment.messages;
    const truncated = new Set(
      segment.responses.filter((response) => response.truncated).map((response) => response.messageIndex),
    );
    truncatedResponses += truncated.size;
    if (truncated.has(messages.length - 1)) messages = messages.slice(0, -1);
    if (thread.role === 'orchestrator' && context.taskPrompt) {
      const replaced = replaceTaskPrompt(messages, context.taskPrompt.prompt, context.taskPrompt.bareTask);
      if (!replaced.ok) {
        return {
          conversations: [],
          truncatedResponses,
          skipped: [
            {
              episode: context.episodeId,
              thread: thread.threadId,
              role: thread.role,
              threadSegment,
              reason: 'prompt-not-found',
              detail: `${replaced.error}; the thread is left out rather than trained on the workflow text`,
            },
          ],
        };
      }
      messages = replaced.messages;
    }
    const targets = segment.responses
      .filter((response) => !response.truncated && response.messageIndex < messages.length)
      .map((response) => response.messageIndex)
      .filter((index) => messages[index]?.role === 'assistant')
      .sort((a, b) => a - b);
    conversations.push({
      episodeId: context.episodeId,
      taskId: context.taskId,
      role: thread.role,
      threadId: thread.threadId,
      threadSegment,
      messages,
      tools: segment.tools,
      targets,
    });
  }
  return { conversations, skipped: [], truncatedResponses };
}
