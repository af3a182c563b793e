/**
 * The sentences of a judge's rationale that say what to fix. Deterministic, so the same rationale always yields
 * the same list: a sentence is kept when it names a shortcoming or a demand (should, must, missing, lacks,
 * failed, did not, …).
 */

const CUE = new RegExp(
  [
    String.raw`\b(?:should|must|needs?\b|needed|required?\b|missing|lacks?|lacked|lacking`,
    String.raw`fail(?:s|ed|ing|ure)?|did not|does not|do not|didn't|doesn't|don't|cannot|can't|never|absent`,
    String.raw`omit(?:s|ted)?|incomplete|unverified|unsupported|without|inconsistent|mismatch(?:es|ed)?`,
    String.raw`incorrect|wrong|invalid|errors?|crash(?:es|ed)?|instead of|only partially|no longer`,
    String.raw`not (?:provided|included|reported|produced|saved|run|verified|found|present|reproducible|justified|explained|addressed))\b`,
  ].join('|'),
  'i',
);
const SENTENCE_END = /(?<=[.!?;])\s+(?=["'`([]?[A-Z0-9])/;
const BULLET = /^\s*(?:[-*•]|\d+[.)])\s+/;
const MAX_SENTENCE_CHARACTERS = 320;

export function actionableSentences(rationale: string, limit = 8): string[] {
  const kept: string[] = [];
  const seen = new Set<string>();
  for (const line of rationale.split(/\n+/)) {
    for (const piece of line.replace(BULLET, '').split(SENTENCE_END)) {
      const sentence = piece.trim().replace(/\s+/g, ' ');
      if (sentence.length < 8 || !CUE.test(sentence)) continue;
      const key = sentence.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      kept.push(
        sentence.length > MAX_SENTENCE_CHARACTERS
          ? `${sentence.slice(0, MAX_SENTENCE_CHARACTERS - 1)}…`
          : sentence,
      );
      if (kept.length === limit) return kept;
    }
  }
  return kept;
}
