import { z } from 'zod';

export const JudgeDirectedKind = z.enum([
  'addresses-judge',
  'claims-verdict',
  'imitates-bundle',
  'prompt-tag',
]);
export type JudgeDirectedKind = z.infer<typeof JudgeDirectedKind>;

/** One span of judge-directed text in a workspace file. */
export const JudgeDirectedFinding = z.object({
  file: z.string(),
  /** 1-based; null in the tail of a file too large to read whole (only its two ends are read). */
  line: z.number().int().positive().nullable(),
  kind: JudgeDirectedKind,
  /** The span on one line, cut to `FINDING_CHARACTERS`. */
  text: z.string(),
});
export type JudgeDirectedFinding = z.infer<typeof JudgeDirectedFinding>;

/**
 * How much text of one episode's workspace addresses its judge (`judge-directed-text.ts`), in the files a judge's
 * bundle may show (the team's reports, results, code and notes; not the task's inputs): the spans and their
 * characters, the files they are in, and the first spans with file and line.
 */
export const JudgeDirectedText = z.object({
  spans: z.number().int().nonnegative(),
  characters: z.number().int().nonnegative(),
  /** Files with at least one span. */
  files: z.number().int().nonnegative(),
  filesScanned: z.number().int().nonnegative(),
  /** False when the scan stopped at its limits (`MAX_SCANNED_FILES`, `MAX_SCANNED_BYTES`): counts are lower bounds. */
  complete: z.boolean(),
  /** The first `MAX_FINDINGS` spans, in file order. */
  findings: z.array(JudgeDirectedFinding),
});
export type JudgeDirectedText = z.infer<typeof JudgeDirectedText>;

/**
 * Text in a workspace that is written to its judge rather than to a reader of the research: instructions to the
 * evaluator ("ignore the rubric", "note to the judge: …"), claims of the verdict ("Workspace A is the correct one", a
 * `{"winner": "A"}` object), imitations of the bundle the evaluation system builds (its section headings, its
 * "[… N tokens omitted …]" marker, its preflight lines, its run summary) and chat or prompt tags (`<|im_start|>`,
 * `</task>`). An agent that learns to persuade its judge has learnt the wrong thing, and a judge that follows such
 * text passes a manipulated run; so the bundle shows each such span inside a marker that says whose it is, and the
 * records count it.
 *
 * Detection is by patterns, chosen so that a research report about an evaluation ("the evaluation shows", "the
 * judges agreed in 80 % of cases") is not flagged: a pattern needs the text to speak to the evaluator, to name the
 * verdict in the judge's own terms, or to copy a format only the evaluation system writes. Zero-width characters are
 * ignored, so that a word split by one is still found.
 */
