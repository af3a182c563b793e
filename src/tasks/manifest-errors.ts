import type { z } from 'zod';

/** `deliverables[2].path` from zod's `['deliverables', 2, 'path']`. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text ? `.${String(key)}` : String(key);
  }
  return text || '(top level)';
}

/** One line per problem, each naming the file and the field. */
export function describeIssues(file: string, issues: ReadonlyArray<z.core.$ZodIssue>): string[] {
  return issues.map((issue) => `${file}: field "${fieldPath(issue.path)}": ${issueMessage(issue)}`);
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys' && issue.keys.some((key) => /\s/.test(key))) {
    return `unknown key ${issue.keys.map((key) => `"${key}"`).join(', ')}: a comma inside an unquoted value of a { ... } mapping splits it; put the value in quotes`;
  }
  if (issue.code === 'unrecognized_keys') {
    return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')} (check the spelling against task-manifest.schema.json)`;
  }
  if (issue.code === 'invalid_union' && 'note' in issue && issue.note === 'No matching discriminator') {
    return `${issue.message}; "kind" is one of report, metrics-json, ablation-json, json, csv, plot, entry-point`;
  }
  return issue.message;
}
