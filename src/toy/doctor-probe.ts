import { PROBE_TOOL_NAME, PROBE_WORD, probeKindOf, type ProbeKind } from '../doctor/probe-protocol.js';
import { isRecord } from '../model/stream-accumulator.js';
import { step, type Step } from './steps.js';
import { toyDraw } from './toy-random.js';

const WORDS = [
  'amber',
  'harbour',
  'quiet',
  'lantern',
  'orbit',
  'meadow',
  'copper',
  'signal',
  'willow',
  'canyon',
  'ember',
  'prism',
  'tundra',
  'velvet',
  'glacier',
  'marble',
  'thistle',
  'beacon',
  'cobalt',
  'saffron',
];

/**
 * The toy model's answer to one of `mass doctor`'s probes (`src/doctor/probe-protocol.ts`), as a well-behaved model
 * would give it: the tool called when asked, reasoning when thinking is on, a sample drawn from the request's seed,
 * and as many counted numbers as `max_tokens` allows. What the server does with the answer is the server's.
 */
export function doctorProbeTurn(kind: ProbeKind, body: unknown): Step {
  const request = isRecord(body) ? body : {};
  const kwargs = isRecord(request.chat_template_kwargs) ? request.chat_template_kwargs : {};
  const thinking = kwargs.enable_thinking !== false;
  const reasoning = (text: string) => (thinking ? { reasoning: text } : {});
  switch (kind) {
    case 'tool-call':
      return step.reply({
        content: null,
        ...reasoning(`I am asked to call ${PROBE_TOOL_NAME} once with the word ${PROBE_WORD}.`),
        toolCalls: [{ name: PROBE_TOOL_NAME, arguments: { word: PROBE_WORD } }],
      });
    case 'reply':
      return step.reply({ content: 'ready', ...reasoning('The user wants the single word "ready".') });
    case 'sample':
      return step.reply({ content: sampleSentence(request), ...reasoning('Eight random words, then.') });
    case 'throughput': {
      const count = typeof request.max_tokens === 'number' ? Math.max(1, Math.floor(request.max_tokens)) : 16;
      const content = Array.from({ length: count }, (_, index) => String(index + 1)).join(' ');
      return step.reply({ content }, { finishReason: 'length', usage: { completionTokens: count } });
    }
  }
}

/** Eight words: drawn from the seed when the request has one, as a seeded sampler would; else from chance. */
function sampleSentence(request: Record<string, unknown>): string {
  const temperature = typeof request.temperature === 'number' ? request.temperature : 1;
  const seed = typeof request.seed === 'number' ? request.seed : null;
  const draw = (index: number) =>
    temperature === 0 ? index / 8 : seed === null ? Math.random() : toyDraw('doctor sample', seed, index);
  const words = Array.from({ length: 8 }, (_, index) => WORDS[Math.floor(draw(index) * WORDS.length)]!);
  return `${words.join(' ')}.`;
}

/** The probe a chat request's body is, by its system prompt; null for any other request. */
export function doctorProbeOf(body: unknown): ProbeKind | null {
  if (!isRecord(body) || !Array.isArray(body.messages)) return null;
  const first: unknown = body.messages[0];
  if (!isRecord(first) || first.role !== 'system' || typeof first.content !== 'string') return null;
  return probeKindOf(first.content);
}
