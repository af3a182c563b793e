/**
 * What the toy model reads from a task prompt: the title, the data files, the deliverables the prompt lists (in the
 * format `renderTaskPrompt` writes them), and which analysis recipe fits. A real model reads the same text.
 */

export type DeliverableKind =
  'report' | 'metrics-json' | 'json' | 'ablation-json' | 'csv' | 'plot' | 'entry-point' | 'other';

export interface DeliverableSpec {
  path: string;
  kind: DeliverableKind;
  /** Keys a JSON deliverable must have. */
  requiredKeys: string[];
  /** Sections a report must have. */
  sections: string[];
  minWords: number;
  columns: string[];
  /** For an entry point: the command that reproduces everything. */
  command?: string;
}

/** The analyses the toy knows: a Hill-curve fit, return statistics, or column summaries of any CSV. */
export type Recipe = 'dose-response' | 'returns' | 'summary';

export interface TaskReading {
  title: string;
  /** The task text itself (no workflow, no directive). */
  text: string;
  dataFiles: string[];
  deliverables: DeliverableSpec[];
  recipe: Recipe;
}

const KINDS = new Set<DeliverableKind>([
  'report',
  'metrics-json',
  'json',
  'ablation-json',
  'csv',
  'plot',
  'entry-point',
]);

export function readTask(text: string): TaskReading {
  const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? 'Research task';
  const deliverables = readDeliverables(text);
  const outputs = new Set(deliverables.map((deliverable) => deliverable.path));
  const dataFiles = unique(
    [...text.matchAll(/`([^`\s]+\.(?:csv|tsv|json|txt|parquet))`/g)]
      .map((match) => match[1]!)
      .filter((file) => !outputs.has(file) && !file.startsWith('results')),
  );
  return { title, text, dataFiles, deliverables, recipe: recipeOf(text) };
}

function recipeOf(text: string): Recipe {
  if (/\bEC50\b|dose[- ]response|inhibition/i.test(text)) return 'dose-response';
  if (/volatility|log returns?|closing prices?/i.test(text)) return 'returns';
  return 'summary';
}

/** The lines `- \`path\` (kind): description…` of the prompt's "## Deliverables" section. */
function readDeliverables(text: string): DeliverableSpec[] {
  const section = /^## Deliverables\s*$([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text)?.[1] ?? '';
  const deliverables: DeliverableSpec[] = [];
  for (const match of section.matchAll(/^- `([^`]+)` \(([a-z-]+)\):(.*)$/gm)) {
    const [, path, kindText, rest] = match as unknown as [string, string, string, string];
    const kind = KINDS.has(kindText as DeliverableKind) ? (kindText as DeliverableKind) : 'other';
    deliverables.push({
      path,
      kind,
      requiredKeys:
        kind === 'metrics-json' || kind === 'json'
          ? backticked(/keys? ((?:`[^`]+`(?:, )?)+)/i.exec(rest))
          : [],
      sections: (/Sections: ([^.]+)\./.exec(rest)?.[1] ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
      minWords: Number(/At least (\d+) words/.exec(rest)?.[1] ?? 0),
      columns: kind === 'csv' ? backticked(/Columns: ((?:`[^`]+`(?:, )?)+)/.exec(rest)) : [],
      ...(kind === 'entry-point'
        ? { command: /Reproduce everything with `([^`]+)`/.exec(rest)?.[1] ?? `python3 ${path}` }
        : {}),
    });
  }
  return deliverables;
}

function backticked(match: RegExpExecArray | null): string[] {
  return match ? [...match[1]!.matchAll(/`([^`]+)`/g)].map((item) => item[1]!) : [];
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

/** The directory the harness runs in, from its `<system-reminder>` ("I'm currently working in the directory: …"). */
export function workingDirectoryOf(firstMessageText: string): string | undefined {
  return /currently working in the directory: (\S+)/.exec(firstMessageText)?.[1];
}

/** Whether a text names a file, by its path or by its file name as a word. */
export function mentions(text: string, path: string): boolean {
  const name = path.split('/').at(-1)!;
  return text.includes(path) || new RegExp(`(^|[^\\w.-])${escapeRegExp(name)}($|[^\\w-])`).test(text);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
