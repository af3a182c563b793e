/**
 * A unified diff of two texts, small and dependency-free: the common head and tail are trimmed, the rest is aligned
 * by longest common subsequence when that is cheap, otherwise shown as one replaced block. Enough to show a judge what
 * changed in a protected file.
 */
export function unifiedDiff(before: string, after: string, contextLines = 2): string {
  const oldLines = before.split('\n');
  const newLines = after.split('\n');
  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix])
    prefix++;
  let suffix = 0;
  while (
    suffix < oldLines.length - prefix &&
    suffix < newLines.length - prefix &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix++;
  }
  const oldMiddle = oldLines.slice(prefix, oldLines.length - suffix);
  const newMiddle = newLines.slice(prefix, newLines.length - suffix);
  if (oldMiddle.length === 0 && newMiddle.length === 0) return '';

  const operations: Array<{ kind: ' ' | '-' | '+'; line: string }> = [];
  for (const line of oldLines.slice(Math.max(0, prefix - contextLines), prefix)) {
    operations.push({ kind: ' ', line });
  }
  operations.push(...alignLines(oldMiddle, newMiddle));
  for (const line of oldLines.slice(oldLines.length - suffix, oldLines.length - suffix + contextLines)) {
    operations.push({ kind: ' ', line });
  }
  const startOld = Math.max(0, prefix - contextLines) + 1;
  const oldCount = operations.filter((operation) => operation.kind !== '+').length;
  const newCount = operations.filter((operation) => operation.kind !== '-').length;
  const header = `@@ -${startOld},${oldCount} +${startOld},${newCount} @@`;
  return [header, ...collapseContext(operations, contextLines)].join('\n');
}

const MAX_ALIGNMENT_CELLS = 4_000_000;

function alignLines(oldLines: string[], newLines: string[]): Array<{ kind: ' ' | '-' | '+'; line: string }> {
  if (oldLines.length * newLines.length > MAX_ALIGNMENT_CELLS) {
    return [
      ...oldLines.map((line) => ({ kind: '-' as const, line })),
      ...newLines.map((line) => ({ kind: '+' as const, line })),
    ];
  }
  const width = newLines.length + 1;
  const lengths = new Uint32Array((oldLines.length + 1) * width);
  for (let row = oldLines.length - 1; row >= 0; row--) {
    for (let column = newLines.length - 1; column >= 0; column--) {
      lengths[row * width + column] =
        oldLines[row] === newLines[column]
          ? lengths[(row + 1) * width + column + 1]! + 1
          : Math.max(lengths[(row + 1) * width + column]!, lengths[row * width + column + 1]!);
    }
  }
  const operations: Array<{ kind: ' ' | '-' | '+'; line: string }> = [];
  let row = 0;
  let column = 0;
  while (row < oldLines.length && column < newLines.length) {
    if (oldLines[row] === newLines[column]) {
      operations.push({ kind: ' ', line: oldLines[row]! });
      row++;
      column++;
    } else if (lengths[(row + 1) * width + column]! >= lengths[row * width + column + 1]!) {
      operations.push({ kind: '-', line: oldLines[row++]! });
    } else operations.push({ kind: '+', line: newLines[column++]! });
  }
  while (row < oldLines.length) operations.push({ kind: '-', line: oldLines[row++]! });
  while (column < newLines.length) operations.push({ kind: '+', line: newLines[column++]! });
  return operations;
}

/** Long runs of unchanged lines between changes shrink to their edges and a `…` line. */
function collapseContext(
  operations: Array<{ kind: ' ' | '-' | '+'; line: string }>,
  contextLines: number,
): string[] {
  const output: string[] = [];
  let index = 0;
  while (index < operations.length) {
    if (operations[index]!.kind !== ' ') {
      output.push(`${operations[index]!.kind}${operations[index]!.line}`);
      index++;
      continue;
    }
    let end = index;
    while (end < operations.length && operations[end]!.kind === ' ') end++;
    const run = operations.slice(index, end);
    if (run.length > contextLines * 2 + 1 && index > 0 && end < operations.length) {
      output.push(...run.slice(0, contextLines).map((operation) => ` ${operation.line}`));
      output.push(`… ${run.length - contextLines * 2} unchanged lines …`);
      output.push(...run.slice(-contextLines).map((operation) => ` ${operation.line}`));
    } else output.push(...run.map((operation) => ` ${operation.line}`));
    index = end;
  }
  return output;
}
