/** Numbers and durations as the report prints them: fixed English formatting, whatever the machine's locale. */
const integerFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatCount(value: number): string {
  return integerFormat.format(value);
}

export function formatNumber(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return value.toFixed(digits);
}

export function formatPercent(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return `${(value * 100).toFixed(1)} %`;
}

export function formatInterval(
  interval: { lower: number; upper: number } | null | undefined,
  digits = 3,
): string {
  if (!interval) return '—';
  return `[${interval.lower.toFixed(digits)}, ${interval.upper.toFixed(digits)}]`;
}

export function formatDuration(milliseconds: number | null): string {
  if (milliseconds === null || !Number.isFinite(milliseconds)) return '—';
  const seconds = Math.round(milliseconds / 1000);
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  if (hours > 0) return `${hours} h ${minutes} min`;
  if (minutes > 0) return `${minutes} min ${rest} s`;
  return `${rest} s`;
}

/** A URL without its user name, password, query and fragment, which may hold credentials. */
export function displayUrl(url: string | undefined): string {
  if (url === undefined) return '—';
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/** Removes credentials written into URLs (`https://user:secret@host`) from a text before it is shown. */
export function withoutUrlCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"]+@/gi, '$1…@');
}
