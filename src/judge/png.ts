const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const PNG_END = Buffer.from([0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);

/** Plots smaller than this on either side cannot show a result. */
export const SMALLEST_READABLE_PLOT_PIXELS = 100;

export type PngInspection =
  { ok: true; width: number; height: number; complete: boolean } | { ok: false; problem: string };

/** Reads a PNG's signature and header chunk; `end` is the file's last 12 bytes (the IEND chunk when complete). */
export function inspectPng(start: Buffer, end: Buffer): PngInspection {
  if (start.length < 8 || !start.subarray(0, 8).equals(PNG_SIGNATURE)) {
    return { ok: false, problem: `not a PNG (${describeSignature(start)})` };
  }
  if (start.length < 24 || start.subarray(12, 16).toString('latin1') !== 'IHDR') {
    return { ok: false, problem: 'PNG without a header chunk (damaged)' };
  }
  const width = start.readUInt32BE(16);
  const height = start.readUInt32BE(20);
  if (width === 0 || height === 0) return { ok: false, problem: `PNG of ${width}×${height} pixels (empty)` };
  return { ok: true, width, height, complete: end.equals(PNG_END) };
}

function describeSignature(start: Buffer): string {
  if (start.length === 0) return 'empty';
  if (start[0] === 0xff && start[1] === 0xd8) return 'looks like JPEG';
  if (start.subarray(0, 4).toString('latin1') === '%PDF') return 'looks like PDF';
  if (
    start.subarray(0, 6).toString('latin1') === 'GIF89a' ||
    start.subarray(0, 6).toString('latin1') === 'GIF87a'
  )
    return 'looks like GIF';
  const text = start.toString('utf8').trimStart();
  if (text.startsWith('<svg') || text.startsWith('<?xml')) return 'looks like SVG/XML text';
  return 'unknown signature';
}
