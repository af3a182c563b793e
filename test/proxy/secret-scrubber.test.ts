import { describe, expect, it } from 'vitest';

import { seededRandom } from '../../src/ranking/seeded-random.js';
import { REDACTED, SecretScrubber } from '../../src/proxy/secret-scrubber.js';

const KEY = 'sk-abc/abcabd';

describe('a streamed text scrubbed of a secret', () => {
  it('gives the text with every secret replaced, however it is cut into pieces', () => {
    const scrubber = SecretScrubber.of(KEY)!;
    // Overlapping starts (`abcab…`), a secret at the very end, a start that never completes.
    const text = `x sk-abc/abcabcabd ${KEY}${KEY} sk-abc/ab! sk-abc\\/abcabd end ${KEY}`;
    const expected = text.replaceAll(KEY, REDACTED).replaceAll('sk-abc\\/abcabd', REDACTED);
    const random = seededRandom(7);
    for (let trial = 0; trial < 200; trial++) {
      const streamed = scrubber.streamed();
      let relayed = '';
      for (let start = 0; start < text.length;) {
        const length = 1 + Math.floor(random() * 6);
        relayed += streamed.push(text.slice(start, start + length));
        expect(relayed).not.toContain(KEY);
        start += length;
      }
      relayed += streamed.flush();
      expect(relayed).toBe(expected);
    }
  });

  it('leaves a key too short to be a secret alone', () => {
    expect(SecretScrubber.of('EMPTY')).toBeNull();
  });
});
