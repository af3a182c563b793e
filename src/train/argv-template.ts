import { UserError } from '../errors.js';

const PLACEHOLDER = /\{([a-z_]+)\}/g;

/**
 * Checks an argv template: a non-empty program, and only placeholders from `known`. `what` names the template in
 * errors (`the training command`).
 */
export function checkArgvTemplate(template: readonly string[], known: readonly string[], what: string): void {
  if (template.length === 0 || template[0] === '') {
    throw new UserError(`${what} is empty: give the program and its arguments as a list`);
  }
  for (const [index, argument] of template.entries()) {
    for (const match of argument.matchAll(PLACEHOLDER)) {
      if (!known.includes(match[1]!)) {
        throw new UserError(
          `${what}: argument ${index} ("${argument}") has the unknown placeholder {${match[1]}}; ` +
            `known: ${known.map((name) => `{${name}}`).join(', ')}`,
        );
      }
    }
  }
}

/** The template with every `{name}` replaced by its value; each argument stays one argument (no shell, no split). */
export function fillArgvTemplate(
  template: readonly string[],
  values: Readonly<Record<string, string>>,
  what: string,
): string[] {
  checkArgvTemplate(template, Object.keys(values), what);
  return template.map((argument) => argument.replace(PLACEHOLDER, (_, name: string) => values[name]!));
}
