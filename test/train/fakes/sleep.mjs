/* global setTimeout */
// A trainer that never finishes on its own: for the abort tests.
setTimeout(() => undefined, 60_000);
