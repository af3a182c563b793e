import type { LoadedTask } from './load-task.js';
import type { Deliverable } from './manifest.js';
import type { EpisodeNetwork } from './task-network.js';

/**
 * The task as the team sees it: the author's Markdown, then the deliverables, protected files and environment
 * generated from the manifest, so the three cannot drift apart. Built from the manifest alone: no withheld file is read.
 */
export function renderTaskPrompt(
  task: LoadedTask,
  /** The network the episode gives instead of the task's own (a benchmark's). Default: the task's. */
  network: EpisodeNetwork = task.manifest.environment.network,
): string {
  const { manifest } = task;
  // A Harbor task's instruction is the whole task, as its benchmark gives it; only the environment is said.
  if (task.harbor) {
    return `${task.prompt.trimEnd()}\n\n## Environment\n\nYou work in the current folder. Python 3 (call \`python3\`) with ${manifest.environment.packages.join(', ')}, bash and the usual command-line tools. ${networkSentence(network)}\n`;
  }
  const sections = [
    task.prompt.trimEnd(),
    '## Deliverables',
    manifest.deliverables.map(describeDeliverable).join('\n'),
  ];
  if (manifest.protected.length > 0) {
    sections.push(
      '## Protected files',
      `Read and run these, but do not modify, move or replace them; they are checked byte for byte after the run:\n${manifest.protected.map((file) => `- \`${file}\``).join('\n')}`,
    );
  }
  const { environment } = manifest;
  sections.push(
    '## Environment',
    `Python 3 (call \`python3\`) with ${environment.packages.join(', ')}. ${networkSentence(network)}`,
  );
  return `${sections.join('\n\n')}\n`;
}

function describeDeliverable(deliverable: Deliverable): string {
  const head = `- \`${deliverable.path}\` (${deliverable.kind}): ${deliverable.description}`;
  switch (deliverable.kind) {
    case 'report': {
      const sections = deliverable.requiredSections;
      const words = deliverable.minWords > 0 ? ` At least ${deliverable.minWords} words.` : '';
      return `${head}${sections.length > 0 ? ` Sections: ${sections.join(', ')}.` : ''}${words}`;
    }
    case 'metrics-json':
      return `${head} A JSON object with the keys ${deliverable.requiredKeys.map((key) => `\`${key}\``).join(', ')}; numbers must be finite (no NaN or Infinity).`;
    case 'json':
      return deliverable.requiredKeys.length > 0
        ? `${head} Keys: ${deliverable.requiredKeys.map((key) => `\`${key}\``).join(', ')}.`
        : head;
    case 'ablation-json':
      return `${head} At least ${deliverable.minVariants} variants, each with its metrics.`;
    case 'csv':
      return `${head} Columns: ${deliverable.columns.map((column) => `\`${column}\``).join(', ')}.`;
    case 'entry-point':
      return `${head} Reproduce everything with \`${deliverable.command}\`.`;
    case 'plot':
      return `${head} PNG.`;
  }
}

const THROUGH_PROXY =
  'through the proxy that HTTP_PROXY and HTTPS_PROXY name (curl, pip, uv and Python clients use it)';

function networkSentence(network: EpisodeNetwork): string {
  if (network === false) return 'No network access: everything needed is in the workspace.';
  if ('anyPublicHost' in network) {
    return `Internet access to public hosts ${THROUGH_PROXY}; the machine's own network is refused.`;
  }
  return (
    `Network access only to ${network.allow.map((entry) => `\`${entry}\``).join(', ')} (without a port: 80 and 443), ` +
    `${THROUGH_PROXY}; everything else is refused.`
  );
}
