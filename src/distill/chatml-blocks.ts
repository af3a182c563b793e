/**
 * The turn markers of ChatML, the format of the Qwen family's templates: every turn is
 * `<|im_start|>role\n … <|im_end|>\n`. Splitting a render at the start markers gives one block per turn (Qwen's
 * templates join consecutive tool results into one user turn); both markers are special tokens, so blocks
 * tokenise on their own exactly as inside the whole text.
 */
export const TURN_START = '<|im_start|>';
export const TURN_END = '<|im_end|>';
const ASSISTANT_HEAD = `${TURN_START}assistant\n`;

export interface RenderedBlock {
  /** The role on the block's first line (`system`, `user`, `assistant`, …; Qwen writes tool results as `user`). */
  role: string;
  text: string;
  /** Offset of the block in the render. */
  offset: number;
}

/** The render cut before every turn-start marker; text before the first marker stays with the first block. */
export function splitTurns(rendered: string): RenderedBlock[] {
  const starts: number[] = [];
  for (let at = rendered.indexOf(TURN_START); at >= 0; at = rendered.indexOf(TURN_START, at + 1)) {
    starts.push(at);
  }
  if (starts.length === 0) return [];
  starts[0] = 0;
  return starts.map((offset, index) => {
    const text = rendered.slice(offset, starts[index + 1] ?? rendered.length);
    const roleStart = text.indexOf(TURN_START) + TURN_START.length;
    const lineEnd = text.indexOf('\n', roleStart);
    return { role: text.slice(roleStart, lineEnd < 0 ? text.length : lineEnd), text, offset };
  });
}

export interface AssistantParts {
  /** The generation prompt the server sent before the model wrote (`<|im_start|>assistant\n`, maybe more): context. */
  head: string;
  /** What the model wrote: reasoning, text, tool calls, through the end marker. */
  output: string;
  /** What the template adds after the end marker (a newline). */
  tail: string;
}

/**
 * An assistant block cut into the template's generation prompt, the model's output and the template's trailer;
 * undefined when the block does not start with that prompt or has no end marker after it.
 */
export function assistantParts(block: string, generationPrompt: string): AssistantParts | undefined {
  const end = block.lastIndexOf(TURN_END);
  if (!generationPrompt.startsWith(ASSISTANT_HEAD) || !block.startsWith(generationPrompt)) return undefined;
  if (end < generationPrompt.length) return undefined;
  const outputEnd = end + TURN_END.length;
  return {
    head: generationPrompt,
    output: block.slice(generationPrompt.length, outputEnd),
    tail: block.slice(outputEnd),
  };
}
