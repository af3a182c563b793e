import { z } from 'zod';

import { durationSchema } from '../timer-duration.js';
import { DraftWorkflow } from '../workflow/workflow.js';
import { TaskNetwork } from './task-network.js';

/** `task.yaml`: everything the system knows about one research task. Zod is the single source of truth. */

export const TASK_MANIFEST_SCHEMA_VERSION = 1;

export const TaskId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'task ids use lowercase letters, digits and hyphens (the folder name)');

/** A path relative to the task folder or the workspace; never absolute, never climbing out with "..". */
export const RelativePath = z
  .string()
  .min(1)
  .refine(
    (value) => !value.startsWith('/') && !/^[a-zA-Z]:/.test(value) && !value.split(/[\\/]/).includes('..'),
    'use a relative path inside the folder (no leading "/", no "..")',
  );

const DeliverableBase = {
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'deliverable ids use lowercase letters, digits and hyphens'),
  path: RelativePath,
  description: z.string().min(1),
};

export const Deliverable = z.discriminatedUnion('kind', [
  z
    .object({
      ...DeliverableBase,
      kind: z.literal('report'),
      /** Markdown headings the report must contain (case-insensitive match on the heading text). */
      requiredSections: z.array(z.string().min(1)).default([]),
      minWords: z.number().int().nonnegative().default(300),
    })
    .strict(),
  z
    .object({
      ...DeliverableBase,
      kind: z.literal('metrics-json'),
      /** Top-level keys the JSON object must have; every number in it must be finite. */
      requiredKeys: z.array(z.string().min(1)).min(1),
    })
    .strict(),
  z
    .object({
      ...DeliverableBase,
      kind: z.literal('ablation-json'),
      /** The file lists variants (an array, or an object keyed by variant); at least this many. */
      minVariants: z.number().int().min(2).default(2),
    })
    .strict(),
  z
    .object({
      ...DeliverableBase,
      kind: z.literal('json'),
      requiredKeys: z.array(z.string().min(1)).default([]),
    })
    .strict(),
  z
    .object({
      ...DeliverableBase,
      kind: z.literal('csv'),
      columns: z.array(z.string().min(1)).min(1),
    })
    .strict(),
  z.object({ ...DeliverableBase, kind: z.literal('plot') }).strict(),
  z
    .object({
      ...DeliverableBase,
      kind: z.literal('entry-point'),
      /** How to reproduce every result from a fresh workspace, run in the workspace root. */
      command: z.string().min(1),
    })
    .strict(),
]);
export type Deliverable = z.infer<typeof Deliverable>;
export type DeliverableKind = Deliverable['kind'];

export const InputFile = z
  .object({
    /** Source, relative to the task folder. */
    from: RelativePath,
    /** Destination, relative to the workspace. */
    to: RelativePath,
  })
  .strict();
export type InputFile = z.infer<typeof InputFile>;

export const GeneratorSpec = z
  .object({
    script: RelativePath.describe(
      'Python script relative to the task folder, run once per seed as `<python> <script> --seed <n> --out <workspace>/<outputDir>`; its folder is withheld',
    ),
    outputDir: RelativePath.default('data'),
    timeoutSeconds: durationSchema({ unit: 's', max: 600 }).default(60),
  })
  .strict();
export type GeneratorSpec = z.infer<typeof GeneratorSpec>;

export const TaskInputs = z
  .object({
    files: z.array(InputFile).default([]),
    generator: GeneratorSpec.optional(),
  })
  .strict();

export const TaskJudge = z
  .object({
    persona: z
      .string()
      .min(1)
      .optional()
      .describe('Who the judge is; defaults by domain (finance, pharmacy, robotics)'),
    lens: z.string().min(1).optional().describe('What the judge looks at first; defaults by domain'),
    focus: z
      .string()
      .min(1)
      .optional()
      .describe(
        "What to check first in this task in particular, added to the lens (the domain's or the task's own): the task's own pitfalls, in the words of its questions",
      ),
  })
  .strict();

export const TaskEnvironment = z
  .object({
    runtime: z.enum(['python3']).default('python3'),
    packages: z.array(z.string().min(1)).default(['numpy', 'pandas', 'matplotlib', 'scipy', 'scikit-learn']),
    network: TaskNetwork.default(false).describe(
      'false (default): no network but the model. { allow: [host, "host:port", "*.suffix"] }: these hosts through the episode\'s egress proxy; without a port 80 and 443 only',
    ),
  })
  .strict();

export const OracleSpec = z
  .object({
    grader: RelativePath.describe(
      'Grader script inside oracle/, run as `<python> <grader> --workspace <dir> --seed <n> --task-dir <dir> --manifest <json> [--rerun <dir|none>]`; prints the grade as JSON',
    ),
    graded: z
      .record(RelativePath, z.array(z.string().min(1)))
      .default({})
      .describe(
        'What the grader reads, by workspace file: the fields it checks (JSON keys, CSV columns; [] for the file alone). `mass tasks validate` checks that the rendered prompt or a data README names each file and field',
      ),
  })
  .strict();

/**
 * The v0 team as task.yaml gives it: structured (subagents' contracts and the hops may still be missing: a draft), or
 * free text, inline or as `{ file: team.md }` relative to the task folder. `loadTask` reads the file.
 */
export const ManifestWorkflow = z.union([
  z
    .object({
      text: z.union([
        z.string().refine((text) => text.trim() !== '', 'the team text is empty'),
        z.object({ file: RelativePath }).strict(),
      ]),
    })
    .strict(),
  DraftWorkflow,
]);
export type ManifestWorkflow = z.infer<typeof ManifestWorkflow>;

export const TaskManifest = z
  .object({
    $schema: z.string().optional(),
    schemaVersion: z.literal(TASK_MANIFEST_SCHEMA_VERSION),
    id: TaskId,
    title: z.string().min(1),
    domain: z
      .string()
      .min(1)
      .describe('finance, pharmacy, robotics, or any other domain (then set judge.persona and judge.lens)'),
    split: z
      .enum(['train', 'test'])
      .describe('train tasks feed the loop; test tasks are held out for evaluation'),
    prompt: z
      .union([z.string().min(1), z.object({ file: RelativePath }).strict()])
      .describe('The task text in Markdown, inline or as { file: prompt.md } relative to the task folder'),
    deliverables: z.array(Deliverable).min(1).describe('What a finished workspace must contain'),
    inputs: TaskInputs.default({ files: [] }).describe(
      'Files copied into every workspace and a generator run once per seed',
    ),
    protected: z
      .array(RelativePath)
      .default([])
      .describe(
        'Workspace paths agents may read and run but must not change; each is the `to` of an input file',
      ),
    judge: TaskJudge.default({}),
    workflow: ManifestWorkflow.describe(
      'The initial (v0) team: 3 to 6 agents with their output contracts and hops (contracts and hops may be left out), or free text as { text: ... } or { text: { file: team.md } }',
    ),
    environment: TaskEnvironment.default({
      runtime: 'python3',
      packages: ['numpy', 'pandas', 'matplotlib', 'scipy', 'scikit-learn'],
      network: false,
    }),
    oracle: OracleSpec.optional().describe(
      "The task's objective grader, withheld from every role; without one the evaluation rests on the external judges",
    ),
  })
  .strict()
  .superRefine((manifest, context) => {
    const issue = (path: Array<string | number>, message: string) =>
      context.addIssue({ code: 'custom', path, message });

    const seenIds = new Set<string>();
    const seenPaths = new Set<string>();
    manifest.deliverables.forEach((deliverable, index) => {
      if (seenIds.has(deliverable.id))
        issue(['deliverables', index, 'id'], `"${deliverable.id}" is listed twice`);
      if (seenPaths.has(deliverable.path)) {
        issue(['deliverables', index, 'path'], `"${deliverable.path}" is listed twice`);
      }
      seenIds.add(deliverable.id);
      seenPaths.add(deliverable.path);
    });

    // A free-text team is kept as written: there are no agents to count.
    if ('agents' in manifest.workflow) {
      const agentCount = manifest.workflow.agents.length;
      if (agentCount < 3 || agentCount > 6) {
        issue(['workflow', 'agents'], `an initial workflow has 3 to 6 agents (found ${agentCount})`);
      }
    }

    const inputDestinations = new Set(manifest.inputs.files.map((file) => file.to));
    manifest.protected.forEach((protectedPath, index) => {
      if (!inputDestinations.has(protectedPath)) {
        issue(['protected', index], `"${protectedPath}" is not the "to" of any inputs.files entry`);
      }
    });

    if (manifest.oracle && !manifest.oracle.grader.startsWith('oracle/')) {
      issue(['oracle', 'grader'], 'the grader lives in the task\'s "oracle/" folder');
    }
    for (const [index, file] of manifest.inputs.files.entries()) {
      if (withheldFolders(manifest).some((folder) => isInside(file.from, folder))) {
        issue(
          ['inputs', 'files', index, 'from'],
          `"${file.from}" is withheld (oracle or generator); it cannot be an input`,
        );
      }
    }
    if (manifest.inputs.generator && manifest.inputs.generator.script.split('/').length < 2) {
      issue(
        ['inputs', 'generator', 'script'],
        'put the generator in its own folder (e.g. generator/generate.py)',
      );
    }
  });
export type TaskManifest = z.infer<typeof TaskManifest>;

/**
 * Folders of a task that must never reach a workspace, a prompt or any role: the oracle, and the generator's folder
 * (it holds the planted truth as code).
 */
export function withheldFolders(manifest: Pick<TaskManifest, 'inputs'>): string[] {
  const folders = ['oracle'];
  const script = manifest.inputs.generator?.script;
  if (script && script.includes('/')) folders.push(script.slice(0, script.lastIndexOf('/')));
  return folders;
}

function isInside(relativePath: string, folder: string): boolean {
  const normalised = relativePath.replace(/^\.\//, '');
  return normalised === folder || normalised.startsWith(`${folder}/`);
}
