/**
 * Folders of tools and caches, never the team's research work: the judge's bundle and the grader's copy of a workspace
 * both leave them out (a team's `.venv` or `node_modules` can hold gigabytes and tens of thousands of files).
 */
export const TOOL_FOLDER_NAMES: ReadonlySet<string> = new Set([
  '.git',
  '.hg',
  '.svn',
  '__pycache__',
  '.ipynb_checkpoints',
  '.mypy_cache',
  '.pytest_cache',
  '.ruff_cache',
  '.cache',
  'node_modules',
  '.venv',
  'venv',
  '.tox',
]);
