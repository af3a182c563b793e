import type { CheckResult, DoctorReport, EndpointReport } from './check-report.js';

/** The report as a terminal reads it: per endpoint, a table of check, verdict, what was seen and the fix. */
export function describeDoctorReport(report: DoctorReport): string {
  const lines: string[] = [];
  if (report.note) lines.push(report.note, '');
  for (const endpoint of report.endpoints) lines.push(...describeEndpoint(endpoint), '');
  for (const hosted of report.notProbed) {
    lines.push(
      `${hosted.model} on ${hosted.provider}'s API (${hosted.roles.join(', ')}): a hosted API, not probed`,
      '',
    );
  }
  const counts = count(report.endpoints.flatMap((endpoint) => endpoint.checks));
  lines.push(
    `${counts.fail} failed, ${counts.warn} warning(s), ${counts.pass} passed` +
      (report.failed ? ': fix the failures before a run (each names its fix)' : ''),
  );
  return lines.join('\n');
}

export function describeEndpoint(
  endpoint: EndpointReport,
  only?: (result: CheckResult) => boolean,
): string[] {
  const rows = endpoint.checks.filter(only ?? (() => true));
  const header = ['check', 'verdict', 'seen', 'fix'];
  const cells = rows.map((row) => [row.check, row.verdict, row.seen, row.fix ?? '']);
  const widths = [0, 1].map((column) =>
    Math.max(header[column]!.length, ...cells.map((row) => row[column]!.length)),
  );
  const format = (row: string[]) =>
    [
      row[0]!.padEnd(widths[0]!),
      row[1]!.padEnd(widths[1]!),
      row[2],
      row[3] ? `\n${' '.repeat(widths[0]! + widths[1]! + 4)}fix: ${row[3]}` : '',
    ]
      .join('  ')
      .trimEnd();
  return [
    `${endpoint.model} at ${endpoint.baseUrl} (${endpoint.roles.join(', ')})`,
    `  ${format(header.slice(0, 3).concat(''))}`,
    ...cells.map((row) => `  ${format(row)}`),
  ];
}

function count(results: CheckResult[]): Record<CheckResult['verdict'], number> {
  const counts = { pass: 0, warn: 0, fail: 0, skip: 0 };
  for (const result of results) counts[result.verdict]++;
  return counts;
}
