/** The most of a job's text that a worker's log line or a job's failure reason repeats. */
const MAXIMUM_LENGTH = 1000;

/**
 * Text from a job (its id, what it asked for) made fit for a log line or a terminal: anyone who can write to Redis
 * chooses it, so control characters (a forged line, an escape sequence) become spaces and the length is bounded.
 */
export function printableText(text: string, maximumLength = MAXIMUM_LENGTH): string {
  const flat = text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ');
  return flat.length > maximumLength ? `${flat.slice(0, maximumLength)}…` : flat;
}
