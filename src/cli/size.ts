import { UserError } from '../errors.js';

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** `32G`, `500M`, `1.5T`, `4096` (bytes) as bytes; K, M, G and T are powers of 1024 (`GiB`, `GB` read the same). */
export function parseSizeBytes(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(text.trim());
  if (!match) throw new UserError(`${flag} "${text}" is not a size: use e.g. 32G, 500M or 1T`);
  const bytes = Math.floor(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!);
  if (bytes <= 0) throw new UserError(`${flag} must be more than zero`);
  return bytes;
}
