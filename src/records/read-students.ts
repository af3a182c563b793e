import { join } from 'node:path';

import type { RunFiles } from '../store/run-files.js';
import { STUDENTS_FOLDER } from '../store/run-paths.js';
import { StudentsRecord, type StudentsRecord as Students } from './students-record.js';

/** Every finished `mass students` experiment of a run (`students/<name>/students.json`); none is no note. */
export async function readStudentExperiments(files: RunFiles): Promise<Students[]> {
  const experiments: Students[] = [];
  for (const name of await files.folders(STUDENTS_FOLDER)) {
    const record = await files.record(StudentsRecord, join(STUDENTS_FOLDER, name, 'students.json'));
    if (record) experiments.push(record);
  }
  return experiments;
}
