// The layer table of src/, in one place: the layering test checks the imports against it, and the docs test checks
// that docs/how-mass-works.md lists the same folders in the same order.

/**
 * Bottom to top; an import must go strictly down. The files at the root of src/ (errors.ts, canonical-json.ts, …) sit
 * below all of these. A folder listed here but absent is fine; a folder under src/ missing from this table fails the
 * layering test, so that the table stays the whole truth.
 */
export const LAYERS: readonly string[] = [
  'model',
  'store',
  'config',
  'statistics',
  'html',
  'cost',
  'notify',
  'ranking',
  'workflow',
  'harness',
  'proxy',
  'records',
  'report',
  'compare',
  'status',
  'view',
  'tasks',
  'episode',
  'judge',
  'optimizer',
  'doctor',
  'queue',
  'search',
  'distill',
  'train',
  'toy',
  'hosting',
  'session',
  'work',
  'rsi',
  'evaluate',
  'analyze',
  'students',
  'benchmark',
  'plan',
  'demo',
  'cli',
];

/** Test infrastructure (scripted servers, a Redis for tests): imported by tests, never by the product. */
export const TESTING = 'testing';
