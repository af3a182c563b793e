import { writeFile } from 'node:fs/promises';

import { isUnaddressed } from '../../config/endpoint.js';
import { episodeSettings } from '../../episode/episode-settings.js';
import { roleEndpoints, runConfigJsonSchema } from '../../config/run-config.js';
import { loadConfiguredModel } from '../../session/run-session.js';
import { recognisedProvider } from '../../model/provider.js';
import { judgeAndOptimizerSampling } from '../../search/search-config.js';

export async function configSchemaAction(flags: { out?: string }): Promise<void> {
  const text = `${JSON.stringify(runConfigJsonSchema(), null, 2)}\n`;
  if (flags.out) await writeFile(flags.out, text);
  else process.stdout.write(text);
}

export async function configCheckAction(file: string): Promise<void> {
  // The settings the model's kind cannot honour are refused here too, not only when a command starts.
  const { config: loaded } = await loadConfiguredModel(file);
  const roles = roleEndpoints(loaded);
  console.log(JSON.stringify(loaded, null, 2));
  console.error(
    `${file}: valid. model ${loaded.model.kind}; executor ${roles.executor.model}, judge ${roles.judge.model}, optimizer ${roles.optimizer.model}`,
  );
  // What each role's provider will be sent, so a setting it refuses or lacks shows here rather than mid-run.
  const sampling = { executor: episodeSettings(loaded).sampling, ...judgeAndOptimizerSampling(loaded) };
  for (const role of ['executor', 'judge', 'optimizer'] as const) {
    const { provider, baseUrl } = roles[role];
    const where = isUnaddressed(roles[role]) ? ', served by mass' : '';
    console.error(
      `  ${role} (${recognisedProvider(provider, baseUrl)}${where}): ${JSON.stringify(sampling[role])}`,
    );
  }
}
