import type { LoadedTask } from '../tasks/load-task.js';
import { assignFileRoles } from './file-roles.js';
import { findJudgeDirectedText } from './judge-directed-text.js';
import { listWorkspace, readWorkspaceText } from './workspace-files.js';
import type { JudgeDirectedText } from '../records/judge-directed-text.js';

export const MAX_FINDINGS = 20;
const FINDING_CHARACTERS = 200;
const MAX_SCANNED_FILES = 2_000;
const MAX_SCANNED_BYTES = 64 * 1024 ** 2;
/** The bundle's own reading limits: a file is read whole up to this, otherwise by its two ends. */
const MAX_WHOLE_BYTES = 4 * 1024 * 1024;
const END_BYTES = 256 * 1024;

/** Scans an episode's workspace for judge-directed text. Reads nothing through a link, and never fails for a file. */
export async function scanJudgeDirectedText(
  task: LoadedTask,
  workspaceDir: string,
): Promise<JudgeDirectedText> {
  const listing = await listWorkspace(workspaceDir);
  const roles = assignFileRoles(task.manifest, listing.entries);
  const files = [
    ...new Set([
      ...roles.reports,
      ...roles.results.map((item) => item.path),
      ...roles.code.map((item) => item.path),
      ...roles.logs,
    ]),
  ].sort();
  const result: JudgeDirectedText = {
    spans: 0,
    characters: 0,
    files: 0,
    filesScanned: 0,
    complete: !listing.walkLimitReached,
    findings: [],
  };
  let bytes = 0;
  for (const file of files) {
    if (result.filesScanned >= MAX_SCANNED_FILES || bytes >= MAX_SCANNED_BYTES) {
      result.complete = false;
      break;
    }
    const read = await readWorkspaceText(workspaceDir, file, {
      maxWholeBytes: MAX_WHOLE_BYTES,
      endBytes: END_BYTES,
    });
    if (read.kind !== 'text') continue;
    result.filesScanned++;
    bytes += Math.min(read.bytes, MAX_WHOLE_BYTES);
    const parts =
      read.file.kind === 'whole'
        ? [{ text: read.file.text, numbered: true }]
        : [
            { text: read.file.head, numbered: true },
            { text: read.file.tail, numbered: false },
          ];
    let found = false;
    for (const part of parts) {
      for (const span of findJudgeDirectedText(part.text)) {
        found = true;
        result.spans++;
        result.characters += span.end - span.start;
        if (result.findings.length < MAX_FINDINGS) {
          result.findings.push({
            file,
            line: part.numbered ? lineOf(part.text, span.start) : null,
            kind: span.kind,
            text: oneLine(part.text.slice(span.start, span.end)),
          });
        }
      }
    }
    if (found) result.files++;
  }
  return result;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let index = text.indexOf('\n'); index >= 0 && index < offset; index = text.indexOf('\n', index + 1))
    line++;
  return line;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > FINDING_CHARACTERS ? `${flat.slice(0, FINDING_CHARACTERS - 1)}…` : flat;
}
