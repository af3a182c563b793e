import path from 'node:path';

import { readJsonLines } from '../store/json-lines.js';
import { trainingDataFiles, WindowSummary, type DataSplit } from '../records/training-records.js';

/** The windows of one split of a built data directory, without their tokens (its `<split>.index.jsonl`). */
export function readWindowSummaries(dataDirectory: string, split: DataSplit): Promise<WindowSummary[]> {
  return readJsonLines(
    path.join(dataDirectory, trainingDataFiles(split).index),
    WindowSummary,
    'a window summary (written by mass data build)',
  );
}
