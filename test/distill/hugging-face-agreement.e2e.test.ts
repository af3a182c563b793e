import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  conversationsOfThread,
  defaultModelDirectory,
  querySegments,
  TokenCache,
  type ChatTemplateModel,
  type QuerySegment,
  type TrainingConversation,
} from '../../src/distill/index.js';
import type { Thread } from '../../src/records/threads.js';
import { defaultTrainerPython } from '../../src/train/trainer-python.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { qwen35Style, qwen35StyleDirectory } from './qwen35-style.js';
import {
  assistant,
  qwen3,
  qwenCodeThreads,
  readThreads,
  syntheticThread,
  system,
  templateInput,
  tool,
  user,
} from './support.js';

// Hugging Face's transformers, where it is installed: MASS_TRAINER_PYTHON, else scripts/install-trainer.sh's venv.
const python = defaultTrainerPython();
const script = fileURLToPath(new URL('./hugging_face_reference.py', import.meta.url));
const environment = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', HF_HUB_OFFLINE: '1' };

function missingTransformers(): string | undefined {
  const probe = spawnSync(python, ['-c', 'import transformers'], { encoding: 'utf8', env: environment });
  if (probe.error) return `${python} cannot run (${probe.error.message})`;
  if (probe.status !== 0) return `${python} cannot import transformers`;
  return undefined;
}

const missing = missingTransformers();
if (missing !== undefined) {
  console.warn(
    `hugging-face-agreement.e2e.test.ts skipped: ${missing}; run \`bash scripts/install-trainer.sh\` (or set MASS_TRAINER_PYTHON)`,
  );
}

interface Reference {
  text: string;
  ids: number[];
  labels: number[];
  /** Per trained turn, the prompt's ids as a server tokenises it. */
  prompts: number[][];
  wholeIds: number[];
  /** The trained turns whose first written token the whole render's tokenisation merges with the prompt's last. */
  mergedAtPrompt: number[];
}

/**
 * Answers without reasoning that start with blank lines, as a model writes them after a tool result: Qwen3's
 * template writes such a turn (not the last) as `<|im_start|>assistant\n` and the text, so the prompt's newline and
 * the answer's meet. The Qwen3.5-style template closes an empty think block after its prompt's `<think>\n`.
 */
const blankLineAnswers = syntheticThread({
  role: 'subagent',
  id: 'blank-lines',
  messages: [
    system('You are a general-purpose subagent.'),
    user('Check the file.'),
    assistant('\n\nI will look at it.', undefined, {
      id: 'c1',
      name: 'read_file',
      arguments: '{"absolute_path": "/workspace/a.txt", "limit": 20}',
    }),
    tool('c1', 'total 10'),
    assistant('\n\nThe total is 10.'),
  ],
});

const logs: Array<[string, () => Thread[]]> = [
  ['team-a', () => readThreads('team-a')],
  ['qwen-code 0.24.4', qwenCodeThreads],
  ['blank-line answers', () => [blankLineAnswers]],
];

interface Case {
  log: string;
  conversation: TrainingConversation;
  segment: QuerySegment;
}

describe.skipIf(missing !== undefined)('the builder agrees with Hugging Face’s apply_chat_template', () => {
  const directory = temporaryDirectory('mass-hf-agreement-');
  afterAll(() => directory.remove());

  const templates: Array<[string, () => Promise<ChatTemplateModel>, () => string]> = [
    ['Qwen3', qwen3, defaultModelDirectory],
    ['the Qwen3.5-style fixture', qwen35Style, qwen35StyleDirectory],
  ];
  const results = new Map<string, Array<{ item: Case; reference: Reference }>>();

  beforeAll(async () => {
    const cases: Array<Case & { template: string; model_dir: string }> = [];
    for (const [template, load, modelDirectory] of templates) {
      const model = await load();
      for (const [log, threadsOf] of logs) {
        for (const thread of threadsOf()) {
          for (const conversation of conversationsOfThread(thread, { episodeId: 'e', taskId: 't' })
            .conversations) {
            for (const result of querySegments(conversation, model, new TokenCache(model), {
              verify: 'every-turn',
            })) {
              if (!result.ok) throw new Error(`${template}, ${log}: ${result.error}`);
              cases.push({
                template,
                model_dir: modelDirectory(),
                log,
                conversation,
                segment: result.segment,
              });
            }
          }
        }
      }
    }
    const input = join(directory.path, 'cases.json');
    const output = join(directory.path, 'references.json');
    writeFileSync(
      input,
      JSON.stringify(
        cases.map(({ model_dir, conversation, segment }) => ({
          model_dir,
          messages: templateInput(conversation.messages.slice(0, segment.endMessageIndex)),
          tools: conversation.tools,
          targets: segment.targets,
        })),
      ),
    );
    const run = spawnSync(python, [script, input, output], { encoding: 'utf8', env: environment });
    if (run.status !== 0) throw new Error(`${script} failed: ${run.stderr || run.error?.message}`);
    const references = JSON.parse(readFileSync(output, 'utf8')) as Reference[];
    cases.forEach((item, index) => {
      const list = results.get(item.template) ?? [];
      list.push({ item, reference: references[index]! });
      results.set(item.template, list);
    });
  }, 240_000);

  it.each(['Qwen3', 'the Qwen3.5-style fixture'])(
    'with %s: the same text, token ids and labels, the prompt/answer boundary a token boundary',
    (template) => {
      const checked = results.get(template)!;
      expect(checked.length).toBeGreaterThanOrEqual(6);
      let merged = 0;
      for (const { item, reference } of checked) {
        const blocks = [...item.segment.header, ...item.segment.blocks];
        const ids = blocks.flatMap((block) => block.ids);
        const labels = blocks.flatMap((block) =>
          block.ids.map((id, offset) =>
            block.supervised && offset >= block.supervised.from && offset < block.supervised.to ? id : -100,
          ),
        );
        expect(item.segment.text).toBe(reference.text);
        expect(ids).toEqual(reference.ids);
        expect(labels).toEqual(reference.labels);
        // Each trained turn's context is the prompt the server tokenised, unless an earlier trained turn of the
        // same segment is one whose first token the whole-text tokenisation would merge with its prompt's last.
        let position = 0;
        let earlierMerge = false;
        const trained = blocks.flatMap((block) => {
          const start = position;
          position += block.ids.length;
          return block.supervised ? [{ block, labelStart: start + block.supervised.from }] : [];
        });
        trained.forEach(({ block, labelStart }, index) => {
          const prompt = reference.prompts[index]!;
          if (earlierMerge) expect(ids.slice(0, labelStart)).not.toEqual(prompt);
          else expect(ids.slice(0, labelStart)).toEqual(prompt);
          if (reference.mergedAtPrompt.includes(block.messageIndex!)) earlierMerge = true;
        });
        // Tokenising the whole render at once gives the same ids exactly where no boundary is merged.
        if (reference.mergedAtPrompt.length === 0) expect(ids).toEqual(reference.wholeIds);
        else expect(ids).not.toEqual(reference.wholeIds);
        merged += reference.mergedAtPrompt.length;
      }
      // The blank-line answers are such turns, under either template.
      const blank = checked.filter(({ item }) => item.log === 'blank-line answers');
      expect(blank.flatMap(({ reference }) => reference.mergedAtPrompt).length).toBeGreaterThan(0);
      expect(merged).toBeGreaterThan(0);
    },
  );
});
