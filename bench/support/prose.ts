import type { Random } from '../../src/ranking/seeded-random.js';

/**
 * Pseudo-words from syllables, so the tokenizer sees a large vocabulary (more words than its 10,000-word cache),
 * drawn with skewed frequencies so its cache helps about as much as on real text.
 */
export function makeLexicon(random: Random, size: number): string[] {
  const syllables = 'ka to ri mun sel va pre dor qui tex zan lo fe gra chi um bet nor pla sti ver xo'.split(
    ' ',
  );
  return Array.from({ length: size }, () => {
    const count = 1 + Math.floor(random() * 4);
    return Array.from({ length: count }, () => syllables[Math.floor(random() * syllables.length)]).join('');
  });
}

/** About `characters` of text: words, numbers, a line of code now and then; Qwen3 reads about 2.6 characters a token. */
export function prose(random: Random, lexicon: string[], characters: number): string {
  let text = '';
  while (text.length < characters) {
    const roll = random();
    if (roll < 0.04) text += '\n';
    else if (roll < 0.08) text += `${Math.floor(random() * 100_000) / 100} `;
    else if (roll < 0.1)
      text += `x_${Math.floor(random() * 50)} = np.mean(data[${Math.floor(random() * 9)}]); `;
    // Cubing the draw skews it towards the first words, as word frequencies in real text are skewed.
    else text += `${lexicon[Math.floor(random() ** 3 * lexicon.length)]}${random() < 0.08 ? '. ' : ' '}`;
  }
  return text;
}
