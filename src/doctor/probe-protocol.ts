/**
 * The requests `mass doctor` sends a model server, named so that a stand-in model can recognise them: the toy model
 * answers them as a well-behaved model would (`src/toy/doctor-probe.ts`), and what the server then does with that
 * answer (parse the tool call, split off the reasoning, report usage) is what the checks look at.
 */

/** What each probe asks for. */
export const PROBE_KINDS = ['tool-call', 'reply', 'sample', 'throughput'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

const PROBE_SYSTEM_PREFIX = 'You are answering a mass doctor probe';

/** The probe's system prompt: it names the probe, so that the answer can be told apart from a run's calls. */
export function probeSystemPrompt(kind: ProbeKind): string {
  return `${PROBE_SYSTEM_PREFIX} (${kind}): a short check of how the model server returns tool calls, reasoning and usage. Follow the user's instruction exactly.`;
}

/** The probe a system prompt names, or null when it is not one of doctor's. */
export function probeKindOf(systemPrompt: string): ProbeKind | null {
  if (!systemPrompt.startsWith(PROBE_SYSTEM_PREFIX)) return null;
  const named = /^\(([a-z-]+)\)/.exec(systemPrompt.slice(PROBE_SYSTEM_PREFIX.length + 1))?.[1];
  return PROBE_KINDS.find((kind) => kind === named) ?? null;
}

/** The tool the tool-call probe asks the model to call, and the argument it must pass. */
export const PROBE_TOOL_NAME = 'record_probe_word';
export const PROBE_WORD = 'delegated';

export const PROBE_TOOL = {
  type: 'function',
  function: {
    name: PROBE_TOOL_NAME,
    description: 'Records one word. Call it when you are asked to.',
    parameters: {
      type: 'object',
      properties: { word: { type: 'string', description: 'the word to record' } },
      required: ['word'],
    },
  },
} as const;

export const PROBE_USER_PROMPTS: Record<ProbeKind, string> = {
  'tool-call': `Call the function ${PROBE_TOOL_NAME} once, with the argument word set to "${PROBE_WORD}". Do not write anything else.`,
  reply: 'Reply with the single word: ready',
  sample: 'Write one sentence of eight random English words.',
  throughput: 'Count upwards from 1, the numbers separated by spaces, and do not stop.',
};

/** The messages of a probe. */
export function probeMessages(kind: ProbeKind): Array<{ role: 'system' | 'user'; content: string }> {
  return [
    { role: 'system', content: probeSystemPrompt(kind) },
    { role: 'user', content: PROBE_USER_PROMPTS[kind] },
  ];
}
