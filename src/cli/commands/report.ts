import { writeReport } from '../../report/index.js';

export async function reportAction(runDirectory: string, options: { out?: string }): Promise<void> {
  const report = await writeReport(runDirectory, options.out);
  if (report.notes.length > 0) {
    console.error(
      `mass report: ${report.notes.length} file(s) missing or unreadable, listed under "Not shown"`,
    );
  }
  console.log(report.file);
}
