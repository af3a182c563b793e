import type { RsiProgressEvent } from '../rsi/run-generations.js';
import { formatClock } from './duration.js';

/**
 * The live view of `mass rsi` (and `mass demo`) on stderr: one line per event that matters, each led by the elapsed
 * time, the stage, episodes done out of those planned, judge calls so far, and an estimate of the time left (from the
 * mean time per episode, the loop's dominant cost; planned episodes assume every task's search wins).
 */
export class RsiProgressDisplay {
  private readonly started = Date.now();
  private episodesDone = 0;
  private judgeCalls = 0;
  private stage = 'starting';
  /** Champion runs counted so far per generation and task. */
  private readonly collected = new Map<string, number>();

  constructor(
    private readonly plannedEpisodes: number,
    private readonly stream: NodeJS.WritableStream = process.stderr,
  ) {}

  readonly onEvent = (event: RsiProgressEvent): void => {
    switch (event.kind) {
      case 'stage':
        this.stage = `${event.generation} ${event.stage}`;
        this.line(event.detail ? `${this.stage}: ${event.detail}` : this.stage);
        return;
      case 'search': {
        const search = event.event;
        if (search.kind === 'episode-finished') {
          this.episodesDone++;
          if (!search.resumed) {
            this.line(`${search.task} ${search.version}: episode ${search.ok ? 'succeeded' : 'failed'}`);
          }
        } else if (search.kind === 'judgment') {
          this.judgeCalls++;
          this.line(`${search.task} ${search.version}: verdict ${search.result}`);
        } else if (search.kind === 'champion') {
          this.line(`${search.task}: ${search.champion} is the new champion`);
        } else if (search.kind === 'task-finished') {
          this.line(
            `${search.task}: search done, champion ${search.champion}${search.beatsReference ? '' : ' (never beat the reference)'}`,
          );
        } else if (search.kind === 'proposal' && !search.ok) {
          this.line(`${search.task} ${search.version}: the optimizer gave no usable design`);
        } else if (search.kind === 'lost-to-outage') {
          this.line(`${search.task} ${search.version}: ${search.what} lost to a server outage, to be redone`);
        }
        return;
      }
      case 'distill': {
        const distill = event.event;
        if (distill.kind === 'stage') {
          this.line(`${event.generation} ${distill.stage}${distill.task ? ` ${distill.task}` : ''}`);
        } else if (distill.kind === 'episodes') {
          const key = `${event.generation}/${distill.task}`;
          const added = distill.done - (this.collected.get(key) ?? 0);
          if (added <= 0) return;
          this.collected.set(key, distill.done);
          this.episodesDone += added;
          this.line(`${distill.task}: ${distill.done}/${distill.total} champion runs`);
        } else if (distill.kind === 'judgments' && distill.done > 0) {
          this.judgeCalls++;
          if (distill.done === distill.total)
            this.line(`${distill.task}: ${distill.total} tournament matches judged`);
        }
        return;
      }
    }
  };

  private line(message: string): void {
    const elapsedMs = Date.now() - this.started;
    const done = Math.min(this.episodesDone, this.plannedEpisodes);
    const left =
      done > 0 && done < this.plannedEpisodes
        ? `, about ${formatClock((elapsedMs / done) * (this.plannedEpisodes - done))} left`
        : '';
    this.stream.write(
      `[${formatClock(elapsedMs)} | episodes ${done}/${this.plannedEpisodes}, judge calls ${this.judgeCalls}${left}] ${message}\n`,
    );
  }
}
