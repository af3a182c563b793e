import { hostname } from 'node:os';
import { join } from 'node:path';

import type { ChatMessage } from '../model/types.js';
import { OpenCallsFile } from '../proxy/open-calls.js';
import { currentStep } from '../store/current-step.js';
import { runFiles } from '../store/run-paths.js';

/** A judge's or optimizer's model call begun and not yet answered, as `model-calls-open.json` holds it. */
export interface OpenModelCall {
  /** Numbered from 0 per process and run. */
  seq: number;
  startedAt: string;
  role: 'judge' | 'optimizer';
  /** The model name the call was made to. */
  model: string;
  /** Provider and address, never a key. */
  endpoint: string;
  /** The step the call works for (a judgment, a match, a proposal). */
  step: string;
  /** Characters of the messages sent: the call is not streamed, so its size is what is known while it waits. */
  promptChars: number;
}

/** Who writes the file: `<hostname>:<pid>`, for `mass status` to compare with the run lock's holder. */
export const MODEL_CALLS_WRITER = `${hostname()}:${process.pid}`;

const files = new Map<string, { file: OpenCallsFile<OpenModelCall>; next: number }>();

/**
 * Runs one model call of the judge or the optimizer with it recorded as in flight: inside a step of a run, the call
 * is in the run's `model-calls-open.json` (written atomically, coalesced) from its start until it ends, however it
 * ends. Outside any step (`mass judge` on two folders) nothing is written. A file left by a killed process names calls
 * that never end; `mass status` tells them from live ones by the run lock's holder.
 */
export async function trackModelCall<T>(
  call: { role: OpenModelCall['role']; model: string; endpoint: string; messages: readonly ChatMessage[] },
  send: () => Promise<T>,
): Promise<T> {
  const step = currentStep();
  if (step === undefined) return send();
  let entry = files.get(step.runDirectory);
  if (!entry) {
    const file = new OpenCallsFile<OpenModelCall>(
      join(step.runDirectory, runFiles.modelCallsOpen),
      MODEL_CALLS_WRITER,
    );
    entry = { file, next: 0 };
    files.set(step.runDirectory, entry);
  }
  const seq = entry.next++;
  entry.file.begin({
    seq,
    startedAt: new Date().toISOString(),
    role: call.role,
    model: call.model,
    endpoint: call.endpoint,
    step: step.key,
    promptChars: call.messages.reduce((total, message) => total + contentChars(message.content), 0),
  });
  try {
    return await send();
  } finally {
    entry.file.end(seq);
  }
}

function contentChars(content: ChatMessage['content']): number {
  if (content === null) return 0;
  return typeof content === 'string' ? content.length : JSON.stringify(content).length;
}
