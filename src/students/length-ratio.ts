/** Default: a pair is length-matched when neither side generated more than 1.25 times the other's output tokens. */
export const DEFAULT_LENGTH_RATIO = 1.25;
