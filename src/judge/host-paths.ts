/**
 * Host paths never reach the judge: an episode folder's name (`…/reference-s3/`, `…/candidate-v4/`) would tell it
 * which workspace is which. Text from the workspace (logs, tracebacks, delegation prompts of an unsandboxed run) has
 * them replaced by neutral placeholders, longest first so a workspace inside its episode folder reads `<workspace>`.
 */
export type RedactHostPaths = (text: string) => string;

export function hostPathRedactor(paths: Array<{ path: string; placeholder: string }>): RedactHostPaths {
  const ordered = paths
    .filter((entry) => entry.path.length > 1)
    .sort((left, right) => right.path.length - left.path.length);
  if (ordered.length === 0) return (text) => text;
  return (text) => {
    let redacted = text;
    for (const entry of ordered) redacted = redacted.replaceAll(entry.path, entry.placeholder);
    return redacted;
  };
}
