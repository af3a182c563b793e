import type { ChatTemplateModel } from './chat-template-model.js';

/**
 * Token ids by text. The same turn recurs in every query segment and thread segment of a thread (system prompt,
 * first user message, tool results), so each distinct text is tokenised once; `clear` between threads keeps
 * memory to one thread's turns.
 */
export class TokenCache {
  private readonly ids = new Map<string, number[]>();
  /** Characters actually tokenised (cache misses), for throughput figures. */
  tokenisedCharacters = 0;

  constructor(private readonly model: Pick<ChatTemplateModel, 'encode'>) {}

  encode(text: string): number[] {
    let ids = this.ids.get(text);
    if (ids === undefined) {
      ids = this.model.encode(text);
      this.ids.set(text, ids);
      this.tokenisedCharacters += text.length;
    }
    return ids;
  }

  clear(): void {
    this.ids.clear();
  }
}
