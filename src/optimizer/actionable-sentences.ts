import { isCriticism } from './criticism.js';
import { clauseSides, type Side } from './verdict-sides.js';

/**
 * The sentences of a judge's rationale that say what the candidate should fix, found by cue words: the fallback for a
 * verdict that gave no list of points against each workspace (`comparison-points.ts`). Deterministic, so the same rationale
 * always yields the same list. A verdict praises and criticises both workspaces, so when the caller knows which one
 * the candidate was shown as, a sentence is kept only for what it says about the candidate: a shortcoming or a demand
 * of the candidate (or of both), or the opponent's strength set against the candidate ("unlike A, B…", "only B…").
 * A criticism of the opponent, or praise of it that names a hazard it avoided, is not the candidate's to fix.
 */

export interface ActionableOptions {
  /** The workspace the candidate was shown as; without it every criticism is kept, whichever side it is about. */
  candidate?: Side;
  /** Sentences kept at most (default 8). */
  limit?: number;
}

const SENTENCE_END = /(?<=[.!?;])\s+(?=["'`([]?[A-Z0-9])/;
const BULLET = /^\s*(?:[-*•]|\d+[.)])\s+/;
/** Where one sentence turns from one workspace to the other. */
const CLAUSE_BREAK =
  /;\s+|,?\s+(?:while|whereas|but|though|although|because)\s+|:\s+(?=(?:[Tt]he\s+)?(?:[Ww]orkspace\s+|[Cc]andidate\s+)?[AB]\b)|,\s+and\s+(?=(?:[Ww]orkspace\s+|[Cc]andidate\s+)?[AB]\b)/;
/** "B is better." names no point to act on, even when it adds "than A". */
const VERDICT_ONLY =
  /^\s*(?:overall,?\s+)?(?:[Ww]orkspace\s+)?[AB]\s+(?:is|wins|was)\s+(?:\w+\s+)?(?:better|preferred|stronger|superior|the (?:better|stronger) (?:one|workspace))?(?:\s+(?:than|over)\s+(?:[Ww]orkspace\s+)?[AB])?(?:\s+overall)?[.!]?\s*$/;
const MAX_SENTENCE_CHARACTERS = 320;

export function actionableSentences(rationale: string, options: ActionableOptions = {}): string[] {
  const limit = options.limit ?? 8;
  const kept: string[] = [];
  const seen = new Set<string>();
  let previous: Side | 'both' | null = null;
  for (const line of rationale.split(/\n+/)) {
    for (const piece of line.replace(BULLET, '').split(SENTENCE_END)) {
      const sentence = piece.trim().replace(/\s+/g, ' ');
      if (sentence.length < 8) continue;
      let concerns = false;
      for (const clause of sentence.split(CLAUSE_BREAK)) {
        const sides = clauseSides(clause);
        const subject: Side | 'both' | null = sides.subject ?? previous;
        previous = subject;
        if (concernsCandidate(clause, subject, sides.contrastedWith, options.candidate)) concerns = true;
      }
      const key = sentence.toLowerCase();
      if (!concerns || seen.has(key)) continue;
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

function concernsCandidate(
  clause: string,
  subject: Side | 'both' | null,
  contrastedWith: Side | null,
  candidate: Side | undefined,
): boolean {
  const criticism = isCriticism(clause);
  if (!candidate || subject === candidate || subject === 'both' || subject === null) return criticism;
  if (criticism || VERDICT_ONLY.test(clause)) return false;
  return contrastedWith === candidate || onlyThe(subject).test(clause);
}

/** "Only B reports an interval": what the other workspace lacks. */
function onlyThe(side: Side): RegExp {
  return new RegExp(String.raw`\b[Oo]nly (?:[Ww]orkspace\s+|[Cc]andidate\s+)?${side}\b`);
}
