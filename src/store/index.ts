export { writeFileAtomic, writeFileAtomicSync } from './atomic-write.js';
export { configDifferences, type ConfigDifference } from './config-differences.js';
export { openRunDatabase, schemaVersionOf, type RunDatabase } from './database.js';
export { ConfigMismatchError, freezeConfig, readFrozenConfig } from './frozen-config.js';
export { runDatabaseMigrations } from './migrations.js';
export { defineRecord, type RecordDefinition, type RecordDefinitionOptions } from './record.js';
export { acquireRunLock, readLockOwner, LockOwner, type RunLock } from './run-lock.js';
export { openRun, Run, runFileNames, type OpenRunOptions } from './run-store.js';
export {
  StepRunner,
  type StepContext,
  type StepOptions,
  type StepRecord,
  type StepStatus,
  type StepWithOutputOptions,
} from './step.js';
