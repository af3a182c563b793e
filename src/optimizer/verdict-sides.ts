/**
 * Which workspace a part of a judge's rationale is about. The judge names the two workspaces A and B, as it was shown
 * them ("Workspace A", "B's report", "the first workspace", "Candidate B"); a part that names neither continues with
 * the workspace of the part before it ("Its numbers…"), and "both" or "neither" speak of the two.
 */

export type Side = 'A' | 'B';

/** The workspace a clause is about, and a workspace it is contrasted with ("unlike A", "than B's"). */
export interface ClauseSides {
  subject: Side | 'both' | null;
  /** A side named only as the term of a comparison. */
  contrastedWith: Side | null;
}

interface Mention {
  side: Side | 'both';
  index: number;
}

const NOUN = String.raw`(?:[Ww]orkspace|[Cc]andidate|[Ss]ubmission|[Aa]ttempt|[Tt]eam|[Bb]undle|[Ss]olution|[Ee]ntry|[Ss]ide|[Oo]ption)`;
const LABELLED = new RegExp(String.raw`\b${NOUN}\s+([AB])(?![\w-])`, 'g');
const ORDINAL =
  /\bthe (first|second)(?:'s|’s)? (?:workspace|one|attempt|submission|candidate|team|bundle|solution)s?\b/gi;
/** A bare letter: not part of a word, a path or a name such as `A07` or `A-1`. */
const BARE = /(?<![\w'’./-])([AB])(?![\w-]|[./]\w)/g;
const TWO =
  /\b(?:both|neither)(?: of (?:them|the (?:two|workspaces))| (?:workspaces?|teams|reports|runs|submissions|attempts|bundles|candidates|solutions|A and B|B and A)|\b(?=[^,.;]*\bnor\b))/gi;
const LEADING_TWO = /^\s*(?:both|neither)\b/i;
/** Words before a side that make it the term of a comparison rather than the one spoken of. */
const CONTRAST_BEFORE =
  /\b(?:unlike|than|over|against|versus|vs\.?|compared (?:with|to)|relative to|beats?|outperforms?|whereas)\s+(?:the\s+)?(?:(?:workspace|candidate|submission|attempt|team|bundle|solution)\s+)?$/i;
/** Words after a sentence-initial "A" that make it the workspace, not the article ("A claims", "A's", "A is"). */
const VERB_AFTER_A =
  /^(?:'s|’s|[,.;:)]|\s+(?:is|was|has|had|does|did|would|could|can|cannot|should|must|will|also|only|still|never|not|then|too|alone|correctly|clearly|instead|again|wins|loses)\b|\s+[a-z]+[^s\W]s\b)/;

/** The sides named in a clause, in order, with the workspace it is about. */
export function clauseSides(clause: string): ClauseSides {
  const mentions = findMentions(clause);
  const contrasted = mentions.filter((mention) => CONTRAST_BEFORE.test(clause.slice(0, mention.index)));
  const subjects = mentions.filter((mention) => !contrasted.includes(mention));
  if (LEADING_TWO.test(clause)) return { subject: 'both', contrastedWith: null };
  const subject = subjects[0]?.side ?? mentions[0]?.side ?? null;
  const other = contrasted.find((mention) => mention.side !== subject && mention.side !== 'both');
  return { subject, contrastedWith: other ? (other.side as Side) : null };
}

function findMentions(clause: string): Mention[] {
  const mentions: Mention[] = [];
  const taken: Array<[number, number]> = [];
  const add = (side: Side | 'both', start: number, end: number) => {
    if (taken.some(([from, to]) => start < to && end > from)) return;
    taken.push([start, end]);
    mentions.push({ side, index: start });
  };
  for (const match of clause.matchAll(TWO)) add('both', match.index, match.index + match[0].length);
  for (const match of clause.matchAll(LABELLED)) {
    add(match[1] as Side, match.index, match.index + match[0].length);
  }
  for (const match of clause.matchAll(ORDINAL)) {
    add(match[1]!.toLowerCase() === 'first' ? 'A' : 'B', match.index, match.index + match[0].length);
  }
  for (const match of clause.matchAll(BARE)) {
    if (match[1] === 'A' && isArticle(clause, match.index)) continue;
    add(match[1] as Side, match.index, match.index + 1);
  }
  return mentions.sort((left, right) => left.index - right.index);
}

/** "A careful reading…" at the start of a clause is the article; "A claims…" is the workspace. */
function isArticle(clause: string, index: number): boolean {
  if (
    clause
      .slice(0, index)
      .trim()
      .replace(/^["'“(]+/, '') !== ''
  )
    return false;
  return !VERB_AFTER_A.test(clause.slice(index + 1));
}
