/**
 * Configurations written before the model's kind was one setting (`model: { kind: toy }`) named the toy model three
 * times: `roles.<role>.provider: toy`, `rsi.trainer.kind: toy` and `rsi.deploy.kind: toy`, with its faults on
 * `roles.executor.faults`. They are read in today's form; a run directory's frozen configuration too, so a run started
 * by an earlier version resumes. Anything else is left for the schema to judge.
 */
export function migrateRunConfig(input: unknown): unknown {
  if (!isObject(input)) return input;
  const roles = isObject(input.roles) ? input.roles : undefined;
  const executor = roles && isObject(roles.executor) ? roles.executor : undefined;
  if (executor?.provider !== 'toy' || input.model !== undefined) return input;

  // The toy model's executor was served where mass started it, whatever baseUrl said.
  const { faults, provider: _provider, baseUrl: _baseUrl, ...executorRest } = executor;
  const migratedRoles: Record<string, unknown> = { ...roles, executor: executorRest };
  for (const role of ['judge', 'optimizer']) {
    if (roles && isObject(roles[role])) migratedRoles[role] = withoutLegacyProvider(roles[role]);
  }
  const migrated: Record<string, unknown> = {
    ...input,
    model: { kind: 'toy', ...(faults === undefined ? {} : { faults }) },
    roles: migratedRoles,
  };
  if (isObject(input.rsi)) {
    const rsi = { ...input.rsi };
    for (const setting of ['trainer', 'deploy']) {
      if (isObject(rsi[setting]) && rsi[setting].kind === 'toy') delete rsi[setting];
    }
    migrated.rsi = rsi;
  }
  if (isObject(input.evaluation)) {
    const evaluation = { ...input.evaluation };
    if (Array.isArray(evaluation.judges)) evaluation.judges = evaluation.judges.map(withoutLegacyProvider);
    migrated.evaluation = evaluation;
  }
  return migrated;
}

/** An endpoint that was `provider: toy` is one without an address: the run's model host places it. */
function withoutLegacyProvider(endpoint: unknown): unknown {
  if (!isObject(endpoint) || endpoint.provider !== 'toy') return endpoint;
  const { provider: _provider, ...rest } = endpoint;
  return rest;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
