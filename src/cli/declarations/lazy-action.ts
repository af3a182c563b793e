/**
 * A command's action that imports its module only when the command runs: `mass --help` and every other command need
 * not load it. Commander passes the command's arguments, its options and the command itself; `action` takes the ones
 * it names.
 */
export function lazyAction<A extends unknown[]>(
  load: () => Promise<(...args: A) => Promise<void>>,
): (...args: A) => Promise<void> {
  return async (...args) => (await load())(...args);
}
