/**
 * What a delegation asked beyond the task. An orchestrator often pastes the whole task into each delegation; the
 * judge and the optimizer read the task already, and a copy cut to fit the bundle would only show its first lines.
 * So the task's text is taken out of the prompt and one marker says where it was: what remains is what the
 * orchestrator itself asked for (the role, the instruction, the files, the contract).
 */

export const TASK_TEXT_MARKER = '[the task text, as given above]';

/** Lines of the task shorter than this are left in: a heading such as "## Deliverables" is no copy of the task. */
const SHORTEST_TASK_LINE = 24;
const SENTINEL = '\u0001';

/** The delegation prompt on one line, every copy of the task (whole, or line by line) replaced by one marker. */
export function askedBeyondTask(prompt: string, taskText: string): string {
  let text = flatten(prompt);
  const task = flatten(taskText);
  if (task !== '') {
    const pieces = [
      task,
      ...new Set(
        taskText
          .split('\n')
          .map(flatten)
          .filter((line) => line.length >= SHORTEST_TASK_LINE),
      ),
    ].sort((left, right) => right.length - left.length);
    for (const piece of pieces) {
      if (text.includes(piece)) text = text.split(piece).join(SENTINEL);
    }
  }
  return text
    .replace(new RegExp(`${SENTINEL}(?:\\s*${SENTINEL})*`, 'g'), TASK_TEXT_MARKER)
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The delegation prompt with the `<task>` … `</task>` tags taken off each copy of the task they wrap (the way an
 * orchestrator quotes the task to a subagent): the tags are the team's own quoting, not text addressed to the
 * judge, and the copy itself is replaced by `askedBeyondTask`. Tags around anything else stay.
 */
export function unwrapTaskCopies(prompt: string, taskText: string): string {
  const task = flatten(taskText);
  if (task === '') return prompt;
  return prompt.replace(/<task>([\s\S]*?)<\/task>/g, (whole, inner: string) =>
    flatten(inner) === task ? inner : whole,
  );
}

function flatten(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
