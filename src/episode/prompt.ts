import { DELEGATION_TOOL } from '../workflow/delegation-tool.js';

/**
 * The teacher directive, appended while collecting training data so that the team really works as a team. Its
 * seven rules follow the paper (MASS.md §1); the wording is this project's own.
 */
export const TEACHER_DIRECTIVE = `## How to run this team

You lead this team; you do not do its work. Follow these rules exactly:

1. Every role other than yours is played by a real subagent: start each one with the \`${DELEGATION_TOOL}\` tool. Never do a worker's job yourself.
2. Call subagents in the foreground (\`run_in_background: false\`) and wait for each result before you go on.
3. Work one stage at a time. Run subagents side by side only when they write disjoint files.
4. Make every worker prompt self-contained: the role's instruction, the absolute path of the workspace, the exact files to read and to write, the results of earlier stages it builds on, the command that verifies its work, and the report it must return.
5. Check each report against what was asked. If something is missing or wrong, delegate again with a narrower prompt; do not fix it yourself.
6. Keep each call's work bounded: split a large job into several calls rather than one long one.
7. Finish cleanly: when every stage has passed its checks, end with a summary of every worker call (role, what it did, outcome).`;

export interface EpisodePromptParts {
  /** The task as the team sees it. */
  task: string;
  /** The team workflow, already rendered as text; absent for a bare-task episode. */
  workflow?: string;
  teacher?: boolean;
  /** The suite's own teacher directive (an imported suite's); default: this project's. */
  teacherDirective?: string;
}

/** The bare task; or the task and the team workflow; with the teacher directive when collecting training data. */
export function episodePrompt(parts: EpisodePromptParts): string {
  const sections = [parts.task.trimEnd()];
  if (parts.workflow) sections.push(parts.workflow.trimEnd());
  if (parts.teacher) sections.push((parts.teacherDirective ?? TEACHER_DIRECTIVE).trimEnd());
  return `${sections.join('\n\n')}\n`;
}
