export { renderReport, writeReport, REPORT_FILE, type WrittenReport } from './build-report.js';
export { readRunForReport, type RunReportData } from './read-run.js';
