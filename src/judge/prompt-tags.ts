/**
 * The tags that delimit the blocks of a judge's or optimizer's prompt (`<task>`, `<workspace name="A">`,
 * `<same-in-both>`). Text quoted into a prompt (the task, a workspace's files, a delegation that repeats the task)
 * cannot open or close one: each such tag in it is shown with both angle brackets escaped, `&lt;task&gt;`, the same
 * way in every prompt.
 */
export const PROMPT_BLOCK_TAGS = ['task', 'workspace', 'same-in-both'] as const;

const TAG = new RegExp(`<(/?)(${PROMPT_BLOCK_TAGS.join('|')})\\b([^<>\\n]*)(>?)`, 'gi');

export function escapePromptTags(text: string): string {
  return text.replace(
    TAG,
    (_match, slash: string, name: string, rest: string, close: string) =>
      `&lt;${slash}${name}${rest}${close ? '&gt;' : ''}`,
  );
}
