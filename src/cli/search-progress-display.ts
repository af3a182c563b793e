import type { SearchProgressEvent } from '../search/search-progress.js';
import { formatClock } from './duration.js';

interface TaskLine {
  version: string;
  running: number;
  episodes: number;
  failedEpisodes: number;
  verdicts: Record<string, number>;
  champion: string;
  state: 'searching' | 'done' | 'failed';
}

const REDRAW_INTERVAL_MS = 250;

/**
 * The live view of `mass search` on stderr: one line per task (iteration, episodes running, verdicts so far,
 * champion), redrawn in place on a terminal; on a pipe or a log file, one line per event that matters (a finished
 * episode, a verdict, a new champion, a task done), so logs stay readable.
 */
export class SearchProgressDisplay {
  private readonly tasks = new Map<string, TaskLine>();
  private readonly started = Date.now();
  private drawnLines = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly live = Boolean(stream.isTTY),
  ) {}

  readonly onEvent = (event: SearchProgressEvent): void => {
    const line = this.line(event.task);
    switch (event.kind) {
      case 'episode-started':
        line.version = event.version;
        line.running++;
        break;
      case 'episode-finished':
        if (!event.resumed) line.running--;
        line.episodes++;
        if (!event.ok) line.failedEpisodes++;
        if (!event.resumed)
          this.log(`${event.task} ${event.version}: episode ${event.ok ? 'succeeded' : 'failed'}`);
        break;
      case 'judgment':
        line.verdicts[event.result] = (line.verdicts[event.result] ?? 0) + 1;
        this.log(`${event.task} ${event.version}: verdict ${event.result}`);
        break;
      case 'proposal':
        line.version = event.version;
        if (!event.ok) this.log(`${event.task} ${event.version}: the optimizer gave no usable design`);
        break;
      case 'champion':
        line.champion = event.champion;
        this.log(`${event.task}: ${event.champion} is the new champion`);
        break;
      case 'task-finished':
        line.state = 'done';
        line.champion = event.champion;
        this.log(
          `${event.task}: done, champion ${event.champion}${event.beatsReference ? '' : ' (never beat the reference)'}`,
        );
        break;
      case 'task-failed':
        line.state = 'failed';
        this.log(`${event.task}: stopped: ${event.error}`);
        break;
      case 'lost-to-outage':
        if (event.what === 'episode') line.running--;
        this.log(
          `${event.task} ${event.version}: ${event.what} lost to a server outage, redone once the server answers (${event.error})`,
        );
        break;
    }
    this.scheduleRedraw();
  };

  /** Draws the final state and stops redrawing. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.live) this.redraw();
  }

  private line(task: string): TaskLine {
    let line = this.tasks.get(task);
    if (!line) {
      line = {
        version: 'v0',
        running: 0,
        episodes: 0,
        failedEpisodes: 0,
        verdicts: {},
        champion: 'reference',
        state: 'searching',
      };
      this.tasks.set(task, line);
    }
    return line;
  }

  private log(message: string): void {
    if (!this.live) this.stream.write(`[${formatClock(Date.now() - this.started)}] ${message}\n`);
  }

  private scheduleRedraw(): void {
    if (!this.live || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.redraw();
    }, REDRAW_INTERVAL_MS);
  }

  private redraw(): void {
    const width = Math.max(...[...this.tasks.keys()].map((task) => task.length), 4);
    const lines = [...this.tasks].map(([task, line]) => {
      const verdicts = Object.entries(line.verdicts)
        .map(([result, count]) => `${result} ${count}`)
        .join(', ');
      const failed = line.failedEpisodes ? ` (${line.failedEpisodes} failed)` : '';
      return `${task.padEnd(width)}  ${line.state === 'searching' ? line.version.padEnd(4) : line.state.padEnd(4)}  running ${line.running}  episodes ${line.episodes}${failed}  verdicts ${verdicts || 'none'}  champion ${line.champion}`;
    });
    lines.push(`elapsed ${formatClock(Date.now() - this.started)}`);
    const up = this.drawnLines > 0 ? `\x1b[${this.drawnLines}F` : '';
    this.stream.write(`${up}${lines.map((text) => `\x1b[2K${text}`).join('\n')}\n`);
    this.drawnLines = lines.length;
  }
}
