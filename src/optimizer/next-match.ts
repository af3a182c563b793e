import type { NextMatch } from '../records/optimizer-call.js';

/**
 * `opponentWorkspace` says where the prompt shows the opponent's workspace: `current` (it is the current design's),
 * `excerpt` (a section of its own) or `none`; `location` is where that section is, as the prompt builder words it
 * (`below, in “Workspace of v0”`).
 */
export function nextMatchSection(
  match: NextMatch,
  opponentWorkspace: { kind: 'current' | 'excerpt' | 'none'; location: string },
): string {
  const name = (side: NextMatch['opponent']) =>
    side.bare
      ? `the ${side.label} run (the bare task, solved by one agent without any workflow)`
      : `${side.label}, the best design so far`;
  const where =
    opponentWorkspace.kind === 'current'
      ? ` (its workspace is the current design’s: ${opponentWorkspace.location})`
      : opponentWorkspace.kind === 'excerpt'
        ? ` (an excerpt of its workspace: ${opponentWorkspace.location})`
        : '';
  const orders =
    match.judgeMode === 'both'
      ? 'in both orders (as Workspace A, then as Workspace B); when the two verdicts disagree, the comparison is a tie'
      : 'as Workspace A or Workspace B, the order drawn at random';
  const lines = [
    `# The next comparison`,
    '',
    `Your design runs once as ${match.version}, and the judge compares its workspace with that of ${name(match.opponent)}${where}, ${orders}.`,
  ];
  const arbitration =
    match.rule === 'official' && !match.champion.bare && match.champion.label !== match.opponent.label;
  if (arbitration) {
    lines.push(
      '',
      `If ${match.version} wins, it then meets ${name(match.champion)}, in a second comparison, and becomes the best only by winning that too.`,
    );
  } else {
    lines.push('', `${match.version} becomes the best design only if the judge prefers its workspace.`);
  }
  lines.push(
    '',
    `A tie, a loss or a failed run keeps ${match.champion.label} as the best: a design as good as it is not enough. To win, ${match.version} must leave a better workspace than ${match.opponent.label}${arbitration ? ` and ${match.champion.label}` : ''}, not only a better design than the ones before it.`,
  );
  return lines.join('\n');
}
