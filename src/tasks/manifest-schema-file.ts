/** File name of the committed JSON Schema for task.yaml, kept in `suites/`. */
export const TASK_MANIFEST_SCHEMA_FILE = 'task-manifest.schema.json';
