/**
 * Python's `random.Random(seed)`, as far as the official evaluation uses it: the Mersenne Twister (MT19937) seeded
 * from a non-negative integer the way CPython seeds it (`init_by_array` over the integer's 32-bit words, least
 * significant first), `getrandbits(k)` for k ≤ 32, and `choice` by rejection sampling. It reproduces the official
 * code's A/B order draw, `random.Random(seed).choice([False, True])`, bit for bit.
 */
const N = 624;
const M = 397;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;
const MATRIX_A = 0x9908b0df;

export class PythonRandom {
  private readonly state = new Uint32Array(N);
  private index = N + 1;

  constructor(seed: number) {
    if (!Number.isSafeInteger(seed))
      throw new Error(`PythonRandom: the seed must be a safe integer, not ${seed}`);
    this.seedByArray(seedWords(Math.abs(seed)));
  }

  /** `random.getrandbits(bits)` for 1 ≤ bits ≤ 32. */
  getrandbits(bits: number): number {
    if (!Number.isInteger(bits) || bits < 1 || bits > 32)
      throw new Error(`getrandbits: bits must be 1..32, not ${bits}`);
    return this.nextUint32() >>> (32 - bits);
  }

  /** The index `random.choice` picks from a sequence of `length` items. */
  choiceIndex(length: number): number {
    if (!Number.isInteger(length) || length < 1 || length > 2 ** 31)
      throw new Error(`choice: bad length ${length}`);
    const bits = 32 - Math.clz32(length); // Python: length.bit_length()
    let drawn = this.getrandbits(bits);
    while (drawn >= length) drawn = this.getrandbits(bits);
    return drawn;
  }

  private seedWith(seed: number): void {
    this.state[0] = seed >>> 0;
    for (let i = 1; i < N; i++) {
      const previous = this.state[i - 1]! ^ (this.state[i - 1]! >>> 30);
      this.state[i] = (Math.imul(1812433253, previous) + i) >>> 0;
    }
    this.index = N;
  }

  private seedByArray(key: number[]): void {
    this.seedWith(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const previous = this.state[i - 1]! ^ (this.state[i - 1]! >>> 30);
      this.state[i] = ((this.state[i]! ^ Math.imul(previous, 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        this.state[0] = this.state[N - 1]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const previous = this.state[i - 1]! ^ (this.state[i - 1]! >>> 30);
      this.state[i] = ((this.state[i]! ^ Math.imul(previous, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        this.state[0] = this.state[N - 1]!;
        i = 1;
      }
    }
    this.state[0] = UPPER_MASK;
    this.index = N;
  }

  private nextUint32(): number {
    if (this.index >= N) this.twist();
    let y = this.state[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  private twist(): void {
    for (let k = 0; k < N; k++) {
      const y = (this.state[k]! & UPPER_MASK) | (this.state[(k + 1) % N]! & LOWER_MASK);
      this.state[k] = this.state[(k + M) % N]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    this.index = 0;
  }
}

/** CPython's key for an integer seed: its absolute value in 32-bit words, least significant first ([0] for 0). */
function seedWords(seed: number): number[] {
  const words: number[] = [];
  let rest = seed;
  do {
    words.push(rest % 2 ** 32);
    rest = Math.floor(rest / 2 ** 32);
  } while (rest > 0);
  return words;
}

/** The official evaluation's draw: `random.Random(seed).choice([False, True])`, true when the pair is swapped. */
export function officialSwap(seed: number): boolean {
  return new PythonRandom(seed).choiceIndex(2) === 1;
}
