import type { z } from 'zod';

/** One line per zod issue, each led by the field path (`turns[2].role: expected ...`), for error messages. */
export function describeIssues(error: z.ZodError, limit = 5): string {
  const lines = error.issues.slice(0, limit).map((issue) => `${fieldPath(issue.path)}: ${issue.message}`);
  const hidden = error.issues.length - lines.length;
  if (hidden > 0) lines.push(`... and ${hidden} more`);
  return lines.join('; ');
}

export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  if (path.length === 0) return '(the whole value)';
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}
