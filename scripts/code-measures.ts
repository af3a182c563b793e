// The size measures of src/ (issue 40): functions over 150 lines, files over 400 lines, exported
// `*Options/*Settings/*Context/*Config` types, and the floors of the import map, each folder on the floor one above
// the highest folder it imports. Run: `node --import tsx scripts/code-measures.ts [--list]`; `--list` names every
// long function and file, longest first.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';

import { LAYERS, TESTING } from '../test/architecture/layer-table.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');
const LONG_FUNCTION = 150;
const LONG_FILE = 400;
const SETTINGS_TYPE = /(Options|Settings|Context|Config)$/;

interface Sized {
  where: string;
  lines: number;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [full] : [];
  });
}

function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

function functionName(node: ts.Node): string {
  if (
    (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) &&
    node.name
  )
    return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (ts.isGetAccessor(node) || ts.isSetAccessor(node)) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  return '(anonymous)';
}

/** Every function-like node of a file with its length in lines, its comments left out. */
function functionLengths(file: string, source: ts.SourceFile): Sized[] {
  const found: Sized[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ where: `${file}:${first + 1} ${functionName(node)}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isExported(node: ts.Node): boolean {
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
  );
}

/** Exported interfaces and type aliases whose names end in Options, Settings, Context or Config. */
function settingsTypes(file: string, source: ts.SourceFile): string[] {
  return source.statements
    .filter(
      (statement): statement is ts.InterfaceDeclaration | ts.TypeAliasDeclaration =>
        (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) &&
        isExported(statement),
    )
    .map((statement) => statement.name.text)
    .filter((name) => SETTINGS_TYPE.test(name))
    .map((name) => `${file} ${name}`);
}

function folderOf(file: string): string | null {
  const relative = path.relative(SRC, file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null;
  const parts = relative.split(path.sep);
  return parts.length === 1 ? null : parts[0]!;
}

/** Each folder's floor: 1 above the highest folder it imports (a folder importing none is on floor 1). */
function floors(imports: Map<string, Set<string>>): Map<string, number> {
  const floor = new Map<string, number>();
  const visiting = new Set<string>();
  const floorOf = (folder: string): number => {
    const known = floor.get(folder);
    if (known !== undefined) return known;
    if (visiting.has(folder)) throw new Error(`the folders import each other in a cycle through ${folder}`);
    visiting.add(folder);
    const below = [...(imports.get(folder) ?? [])].map(floorOf);
    visiting.delete(folder);
    const own = 1 + Math.max(0, ...below);
    floor.set(folder, own);
    return own;
  };
  for (const folder of imports.keys()) floorOf(folder);
  return floor;
}

function main(): void {
  const list = process.argv.includes('--list');
  const functions: Sized[] = [];
  const files: Sized[] = [];
  const types: string[] = [];
  const imports = new Map<string, Set<string>>();
  for (const full of sourceFiles(SRC)) {
    const file = path.relative(ROOT, full);
    const text = readFileSync(full, 'utf8');
    const source = ts.createSourceFile(full, text, ts.ScriptTarget.Latest, true);
    files.push({ where: file, lines: lineCount(text) });
    functions.push(...functionLengths(file, source));
    types.push(...settingsTypes(file, source));
    const from = folderOf(full);
    if (from === null || from === TESTING) continue;
    const targets = imports.get(from) ?? new Set<string>();
    imports.set(from, targets);
    for (const reference of ts.preProcessFile(text, true, true).importedFiles) {
      if (!reference.fileName.startsWith('.')) continue;
      const to = folderOf(path.resolve(path.dirname(full), reference.fileName));
      if (to !== null && to !== from && to !== TESTING) targets.add(to);
    }
  }
  const longFunctions = functions.filter((f) => f.lines > LONG_FUNCTION).sort((a, b) => b.lines - a.lines);
  const longFiles = files.filter((f) => f.lines > LONG_FILE).sort((a, b) => b.lines - a.lines);
  const floor = floors(imports);
  const top = Math.max(...floor.values());
  const totalLines = files.reduce((sum, f) => sum + f.lines, 0);

  console.log(`src/: ${files.length} files, ${totalLines} lines`);
  console.log(`functions over ${LONG_FUNCTION} lines: ${longFunctions.length}`);
  if (list) for (const f of longFunctions) console.log(`  ${f.lines}  ${f.where}`);
  console.log(`files over ${LONG_FILE} lines: ${longFiles.length}`);
  if (list) for (const f of longFiles) console.log(`  ${f.lines}  ${f.where}`);
  console.log(`exported *Options/*Settings/*Context/*Config types: ${types.length}`);
  if (list) for (const name of types.sort()) console.log(`  ${name}`);
  console.log(`import map: ${floor.size} folders on ${top} floors (layer table: ${LAYERS.length} layers)`);
  for (const folder of ['config', 'report', 'view'])
    console.log(`  ${folder}: floor ${floor.get(folder) ?? '-'}`);
  if (list) {
    console.log('floors, bottom first:');
    for (let level = 1; level <= top; level++) {
      const here = LAYERS.filter((folder) => floor.get(folder) === level);
      console.log(`  ${String(level).padStart(2)}  ${here.join(' ')}`);
    }
  }
}

main();
