/** What a search reports as it goes, for a live display; nothing depends on it. */
export type SearchProgressEvent =
  | { kind: 'episode-started'; task: string; version: string }
  /** `resumed`: found finished by an earlier run of the search. */
  | { kind: 'episode-finished'; task: string; version: string; ok: boolean; resumed?: boolean }
  | { kind: 'judgment'; task: string; version: string; result: string }
  | { kind: 'proposal'; task: string; version: string; ok: boolean }
  | { kind: 'champion'; task: string; version: string; champion: string }
  | { kind: 'task-finished'; task: string; champion: string; beatsReference: boolean }
  | { kind: 'task-failed'; task: string; error: string }
  /** Work lost because the model server stayed down (`what`: episode, judge …, optimizer); it waits and is redone. */
  | { kind: 'lost-to-outage'; task: string; version: string; what: string; error: string };
