/** Names of environment variables that hold secrets by convention: keys, tokens, passwords. */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i;

/** Values shorter than this are not taken for secrets: replacing them would blank ordinary words. */
const SHORTEST_SECRET = 8;

/**
 * `text` with the value of every secret-looking environment variable, and of each variable `names` gives (the roles'
 * `apiKeyEnv`), replaced by `[redacted]`: what leaves the run for a notification command carries no key.
 */
export function redactSecrets(
  text: string,
  names: readonly string[],
  environment: NodeJS.ProcessEnv = process.env,
): string {
  const secrets = Object.entries(environment)
    .filter(([name, value]) => value !== undefined && (names.includes(name) || SECRET_NAME.test(name)))
    .map(([, value]) => value!)
    .filter((value) => value.length >= SHORTEST_SECRET)
    // The longest first, so that a secret holding another is replaced whole.
    .sort((a, b) => b.length - a.length);
  let redacted = text;
  for (const secret of secrets) {
    // As written, and as JSON writes it inside a string (quotes and backslashes escaped).
    for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) {
      redacted = redacted.split(form).join('[redacted]');
    }
  }
  return redacted;
}
