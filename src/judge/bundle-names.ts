import { markJudgeDirectedText } from './judge-directed-text.js';

/**
 * Characters of a workspace file name that would change how the bundle reads: control characters (a newline would
 * start a line of the name's own, a forged heading or section), Unicode line and paragraph separators, marks that
 * reverse the direction of text, and the backslash that starts an escape (so that an escape is never ambiguous).
 */
const UNSAFE = /[\\\p{Cc}\u2028\u2029\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

const SHORT_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A name from a workspace (a file, a folder, a link) as the bundle shows it: the characters above written as escapes
 * in the style of a JSON string (`\n`, `\u001b`), the judge-directed marker's brackets neutralised and any text in the
 * name addressing the judge marked, as in a file's text. An ordinary name is shown as it is.
 */
export function shownName(name: string): string {
  const escaped = name.replace(
    UNSAFE,
    (character) => SHORT_ESCAPES[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return markJudgeDirectedText(escaped);
}
