import { alignSequences, commonEnds, type AlignmentStep } from './sequence-alignment.js';

/**
 * A unified diff of two texts, small and dependency-free: lines aligned by longest common subsequence when that is
 * cheap, otherwise the changed middle shown as one replaced block. Enough to show a judge what changed in a protected
 * file.
 */
export function unifiedDiff(before: string, after: string, contextLines = 2): string {
  const steps = alignSequences(before.split('\n'), after.split('\n'));
  const { head, tail } = commonEnds(steps);
  if (head === steps.length) return '';
  const shown = steps.slice(Math.max(0, head - contextLines), steps.length - tail + contextLines);
  const startOld = Math.max(0, head - contextLines) + 1;
  const oldCount = shown.filter((step) => step.op !== 'added').length;
  const newCount = shown.filter((step) => step.op !== 'removed').length;
  const header = `@@ -${startOld},${oldCount} +${startOld},${newCount} @@`;
  return [header, ...collapseContext(shown, contextLines)].join('\n');
}

const MARKS = { same: ' ', removed: '-', added: '+' } as const;

/** Long runs of unchanged lines between changes shrink to their edges and a `…` line. */
function collapseContext(steps: Array<AlignmentStep<string>>, contextLines: number): string[] {
  const output: string[] = [];
  let index = 0;
  while (index < steps.length) {
    if (steps[index]!.op !== 'same') {
      output.push(`${MARKS[steps[index]!.op]}${steps[index]!.item}`);
      index++;
      continue;
    }
    let end = index;
    while (end < steps.length && steps[end]!.op === 'same') end++;
    const run = steps.slice(index, end);
    if (run.length > contextLines * 2 + 1 && index > 0 && end < steps.length) {
      output.push(...run.slice(0, contextLines).map((step) => ` ${step.item}`));
      output.push(`… ${run.length - contextLines * 2} unchanged lines …`);
      output.push(...run.slice(-contextLines).map((step) => ` ${step.item}`));
    } else output.push(...run.map((step) => ` ${step.item}`));
    index = end;
  }
  return output;
}
