/**
 * The sources a Dockerfile's `ADD` lines fetch by URL. The engine's daemon fetches them itself, from the host's own
 * network, whatever network the build's `RUN` steps get: `ADD http://127.0.0.1:8000/… /x` (measured: a page served on
 * the host's loopback) or `ADD http://169.254.169.254/… /x` bakes a host service's or a cloud's metadata answer into
 * the image, where the agent reads it and, with the internet, sends it on. A dataset's Dockerfile may fetch only when
 * the dataset is trusted (`MASS_BUILD_NETWORK=host`); otherwise such a task is skipped with the line named.
 */

/** One `ADD` source that is, or may be, a URL: where it is, and what it says. */
export interface RemoteSource {
  line: number;
  source: string;
}

/**
 * The `ADD` (and `ONBUILD ADD`) sources of `text` that name a URL (`scheme://…`), a git remote (`git@…`) or a variable
 * (`$…`, which may expand to either), with the line each instruction starts on (pure). Continuation lines are joined
 * with the escape character the `# escape=` directive sets (default `\`); comments are not instructions.
 */
export function remoteAddSources(text: string): RemoteSource[] {
  const lines = text.split(/\r?\n/);
  const escape = escapeCharacter(lines);
  const found: RemoteSource[] = [];
  for (let index = 0; index < lines.length; index++) {
    const start = index;
    let instruction = lines[index]!;
    if (/^\s*#/.test(instruction)) continue;
    while (instruction.trimEnd().endsWith(escape) && index + 1 < lines.length) {
      index++;
      const next = lines[index]!;
      if (/^\s*#/.test(next)) continue;
      instruction = `${instruction.trimEnd().slice(0, -1)} ${next}`;
    }
    const words = instruction.trim().split(/\s+/);
    const keyword = (words[0] ?? '').toUpperCase();
    const add =
      keyword === 'ADD'
        ? words.slice(1)
        : keyword === 'ONBUILD' && words[1]?.toUpperCase() === 'ADD'
          ? words.slice(2)
          : null;
    if (add === null) continue;
    const sources = addSources(add);
    for (const source of sources) {
      if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(source) || source.startsWith('git@') || source.includes('$')) {
        found.push({ line: start + 1, source });
      }
    }
  }
  return found;
}

/** An `ADD`'s sources: its words without flags (`--chown=…`) and without the destination (the last). */
function addSources(words: string[]): string[] {
  const text = words.join(' ').trim();
  // The JSON form: ["src", …, "dest"].
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed.slice(0, -1).map(String);
    } catch {
      // Not JSON after all: read as words.
    }
  }
  const plain = words.filter((word) => !word.startsWith('--') && !/^<</.test(word));
  return plain.slice(0, -1);
}

/** The `# escape=` parser directive (before any instruction or comment), or `\`. */
function escapeCharacter(lines: string[]): string {
  for (const line of lines) {
    const directive = /^\s*#\s*([A-Za-z]+)\s*=\s*(\S+)\s*$/.exec(line);
    if (!directive) break;
    if (directive[1]!.toLowerCase() === 'escape') return directive[2]!;
  }
  return '\\';
}
