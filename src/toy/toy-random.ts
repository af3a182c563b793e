import { createHash } from 'node:crypto';

/**
 * The toy model's randomness: a uniform number in [0, 1) from a hash of named parts (the request seed, the task, the
 * decision). A decision drawn from the same parts comes out the same on every request of an episode, so a model that
 * sees one request at a time still behaves consistently within an episode, and differently across seeds.
 */
export function toyDraw(...parts: Array<string | number>): number {
  const digest = createHash('sha256').update(parts.map(String).join('\u0000')).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

/** A short stable fingerprint of a text, for keying draws on a task or a prompt. */
export function textKey(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}
