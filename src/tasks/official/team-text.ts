/**
 * The team part of an official initial-workflow file. Such a file repeats the task text, then describes the team
 * ("Create an agent team with following agent candidates…" and a list of agents), then repeats the closing
 * instructions of the bare query (uv, logs.txt) with a few lines about the team added. The team text is what the file
 * adds to the bare query: the shared opening is cut, and the bare query's own closing lines are cut where they recur,
 * so that the episode prompt (bare query, then team) says nothing twice.
 */
export interface TeamText {
  text: string;
  /** False when the file does not open with the bare query's text: the whole file is then the team text. */
  opensWithTask: boolean;
}

export function teamText(bare: string, initial: string): TeamText {
  const shared = sharedOpening(bare, initial);
  const opensWithTask = shared > 0 && bare.slice(0, shared).trim().length >= Math.min(40, bare.trim().length);
  if (!opensWithTask) return { text: tidy(initial), opensWithTask: false };
  let rest = initial.slice(shared);
  const bareClosing = bare.slice(shared).trim();
  if (bareClosing !== '') {
    const at = rest.indexOf(bareClosing);
    if (at >= 0) rest = `${rest.slice(0, at)}\n\n${rest.slice(at + bareClosing.length)}`;
  }
  return { text: tidy(rest), opensWithTask: true };
}

/** The length of the common opening, cut back to the start of a line unless it covers the whole bare query. */
function sharedOpening(bare: string, initial: string): number {
  let length = 0;
  while (length < bare.length && length < initial.length && bare[length] === initial[length]) length += 1;
  if (length === bare.length) return length;
  const lineStart = bare.lastIndexOf('\n', length - 1) + 1;
  return lineStart;
}

/** Trailing spaces off each line, at most one blank line in a row, no blank lines at either end. */
function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
