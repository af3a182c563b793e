import { parseDurationSeconds } from '../duration.js';
import { readRunRecords } from '../../status/read-run.js';
import { renderStatusJson } from '../../status/render-json.js';
import { renderStatusText } from '../../status/render-text.js';
import { summariseRun } from '../../status/summarise.js';

interface StatusOptions {
  watch?: boolean;
  interval: string;
  window: string;
  json?: boolean;
}

/** `mass status <run-dir>`: once, or with `--watch` again and again until interrupted. */
export async function statusAction(runDirectory: string, options: StatusOptions): Promise<void> {
  const windowMs = parseDurationSeconds(options.window, '--window') * 1000;
  const intervalMs = parseDurationSeconds(options.interval, '--interval') * 1000;
  const show = async (): Promise<string> => {
    const status = summariseRun(await readRunRecords(runDirectory, { windowMs }), windowMs);
    return options.json ? renderStatusJson(status, !options.watch) : renderStatusText(status);
  };
  if (!options.watch) {
    process.stdout.write(await show());
    return;
  }
  const clear = !options.json && process.stdout.isTTY ? '\x1b[2J\x1b[H' : '';
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  while (!stopped) {
    process.stdout.write(`${clear}${await show()}`);
    const waited = Date.now();
    while (!stopped && Date.now() - waited < intervalMs) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(250, intervalMs)));
    }
  }
}
