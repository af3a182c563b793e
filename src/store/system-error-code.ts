/** The `code` of a Node system error (`ENOENT`, `EEXIST`, ...), or undefined for anything else. */
export function systemErrorCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}
