/**
 * One error hierarchy for the whole project.
 *
 * - `UserError`: the user can fix it (a wrong URL, an unknown model, a bad file or flag). The message says what to do.
 * - `SystemError`: something outside the user's control failed (a server kept answering 503, a disk write failed).
 * - `ModelBehaviourError`: the model answered, but not in a usable way (no choices, output that cannot be repaired).
 *
 * Each carries the exit code the CLI uses, so scripts can tell the three apart.
 */
export abstract class MassError extends Error {
  abstract readonly exitCode: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class UserError extends MassError {
  readonly exitCode = 2;
}

export class SystemError extends MassError {
  readonly exitCode = 3;
}

export class ModelBehaviourError extends MassError {
  readonly exitCode = 4;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
