/** Deliverable paths may be globs: `*` and `?` within one path segment, `**` across segments, `[abc]` classes. */

export function isGlob(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

export function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index]!;
    if (character === '*') {
      if (pattern[index + 1] === '*') {
        const slashFollows = pattern[index + 2] === '/';
        source += slashFollows ? '(?:.*/)?' : '.*';
        index += slashFollows ? 2 : 1;
      } else source += '[^/]*';
    } else if (character === '?') {
      source += '[^/]';
    } else if (character === '[') {
      const close = pattern.indexOf(']', index + 1);
      if (close > index + 1) {
        const body = pattern.slice(index + 1, close).replace(/\\/g, '\\\\');
        source += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        index = close;
      } else source += '\\[';
    } else source += character.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The paths (already sorted) matching a deliverable's path or glob. */
export function matchPaths(pattern: string, paths: readonly string[]): string[] {
  const normalised = pattern.replace(/^\.\//, '');
  if (!isGlob(normalised)) return paths.includes(normalised) ? [normalised] : [];
  const expression = globToRegExp(normalised);
  return paths.filter((candidate) => expression.test(candidate));
}
