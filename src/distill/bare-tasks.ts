import path from 'node:path';

import { episodePrompt } from '../episode/prompt.js';
import { UserError } from '../errors.js';
import { isFile } from '../tasks/file-kind.js';
import { loadTask, TASK_FILE } from '../tasks/load-task.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';

/**
 * The bare-task prompt of each task, as a bare-task episode is given it: what replaces the workflow and teacher
 * directive in the orchestrator's first message. Tasks are found by id in the folders given (a task folder, or a
 * suite folder holding task folders), else in the folder the episode recorded.
 */
export class BareTasks {
  private readonly prompts = new Map<string, Promise<string>>();

  constructor(private readonly taskDirectories: readonly string[] = []) {}

  prompt(taskId: string, recordedDirectory: string): Promise<string> {
    let prompt = this.prompts.get(taskId);
    if (!prompt) {
      prompt = this.load(taskId, recordedDirectory);
      this.prompts.set(taskId, prompt);
    }
    return prompt;
  }

  private async load(taskId: string, recordedDirectory: string): Promise<string> {
    const candidates = [
      ...this.taskDirectories.flatMap((directory) => [directory, path.join(directory, taskId)]),
      recordedDirectory,
    ].map((directory) => path.resolve(directory));
    for (const directory of candidates) {
      if (path.basename(directory) !== taskId || !(await isFile(path.join(directory, TASK_FILE)))) continue;
      const task = await loadTask(directory);
      return episodePrompt({ task: renderTaskPrompt(task) });
    }
    throw new UserError(
      `task "${taskId}": no folder ${taskId}/ with a ${TASK_FILE} in ${[...new Set(candidates.map((candidate) => path.dirname(candidate)))].join(', ')}; pass the task (or its suite) with --task-dir`,
    );
  }
}
