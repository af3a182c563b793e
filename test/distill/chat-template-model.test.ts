import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { defaultModelDirectory, loadChatTemplateModel } from '../../src/distill/index.js';
import { temporaryDirectory } from '../support/fixtures.js';

describe('a model directory', () => {
  const directory = temporaryDirectory('mass-chat-model-');
  afterAll(() => directory.remove());

  /** A model directory holding Qwen3's tokenizer files (linked) and the files given. */
  function modelDirectory(name: string, linked: string[], files: Record<string, string>): string {
    const dir = join(directory.path, name);
    mkdirSync(dir);
    for (const file of linked) symlinkSync(join(defaultModelDirectory(), file), join(dir, file));
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
    return dir;
  }

  it('is refused when its template is not ChatML, or a file is missing, saying which', async () => {
    const llama = modelDirectory('llama', ['tokenizer.json'], {
      'tokenizer_config.json': JSON.stringify({
        chat_template:
          '{% for message in messages %}<|start_header_id|>{{ message.role }}<|end_header_id|>\n\n{{ message.content }}<|eot_id|>{% endfor %}',
      }),
    });
    await expect(loadChatTemplateModel(llama)).rejects.toThrow(/not in the ChatML format/);
    await expect(loadChatTemplateModel(join(directory.path, 'nowhere'))).rejects.toThrow(
      /tokenizer(_config)?\.json: cannot read it .*a model directory holds tokenizer.json and tokenizer_config.json/,
    );
  });

  it('uses a chat_template.jinja beside the tokenizer files, as transformers does', async () => {
    const own = modelDirectory('own-template', ['tokenizer.json', 'tokenizer_config.json'], {
      'chat_template.jinja':
        '{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}',
    });
    const model = await loadChatTemplateModel(own);
    expect(model.render([{ role: 'user', content: 'hi' }], [])).toBe('<|im_start|>user\nhi<|im_end|>\n');
    expect(model.decode(model.encode('<|im_start|>user\nhi<|im_end|>'))).toBe(
      '<|im_start|>user\nhi<|im_end|>',
    );
  });
});
