import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import type { EpisodeBackend, EpisodeRequest } from '../../src/queue/episode-backend.js';
import { EpisodeRecord } from '../../src/records/episode-record.js';
import type { LoadedTask } from '../../src/tasks/load-task.js';
import { episodeRecord } from '../judge/support.js';

/** What the stand-in team's episode spent: `episodeRecord`'s 90,000 input and 12,345 output tokens. */
export const EPISODE_TOKENS = 102_345;

/**
 * An episode back-end standing in for the team: `fill` writes the workspace of the run with seed `seed`, and the
 * episode leaves a finished record (`episodeRecord`'s). A finished episode directory is not run again, as with
 * `runEpisode`; `started` lists the step keys of the episodes that ran.
 */
export class StandInTeam implements EpisodeBackend {
  readonly kind = 'local';
  readonly started: string[] = [];

  constructor(
    private readonly task: LoadedTask,
    private readonly fill: (workspace: string, seed: number) => Promise<void>,
  ) {}

  async run(request: EpisodeRequest) {
    const { outDir, seed } = request.options;
    const file = join(outDir, 'episode.json');
    if (existsSync(file)) return { record: await EpisodeRecord.read(file), ran: false };
    this.started.push(request.stepKey);
    const workspace = join(outDir, 'workspace');
    await mkdir(workspace, { recursive: true });
    await this.fill(workspace, seed!);
    const record = episodeRecord(this.task, { episodeId: outDir.split('/').at(-1)!, seed: seed! });
    await EpisodeRecord.write(file, record);
    return { record, ran: true };
  }

  async close() {}
}
