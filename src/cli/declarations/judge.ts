import type { Command } from 'commander';

import {
  DEFAULT_BUNDLE_BUDGET,
  DEFAULT_JUDGE_SAMPLING,
  DEFAULT_MAX_REPAIR_ATTEMPTS,
} from '../../judge/judge-defaults.js';
import { REASONING_EFFORTS } from '../../model/reasoning-effort.js';
import { lazyAction } from './lazy-action.js';

export function declareJudge(program: Command): void {
  program
    .command('judge')
    .description('Compare two workspaces of one task with the pairwise judge: A, B or tie, and why')
    .argument('<workspaceA>', 'an episode directory (episode.json, workspace/) or a workspace folder')
    .argument('<workspaceB>', 'the other one')
    .requiredOption('--task <dir>', 'the task folder (with task.yaml)')
    .requiredOption('--model <name>', 'the judge model, as the server names it')
    .option(
      '--provider <provider>',
      "openai-compatible (vLLM and the like), openai (OpenAI's API) or anthropic (Anthropic's API)",
      'openai-compatible',
    )
    .option(
      '--base-url <url>',
      'the model server, OpenAI style, ending in /v1 (openai and anthropic: default their own API)',
    )
    .option('--api-key-env <variable>', 'environment variable holding the API key')
    .option(
      '--mode <mode>',
      'random: one judgment, A/B order drawn from the seed (official); both: both orders, disagreement is a tie',
      'random',
    )
    .option('--seed <n>', 'draws the A/B order in random mode', '0')
    .option(
      '--repairs <n>',
      'repair requests after an unusable reply before the judgment fails',
      String(DEFAULT_MAX_REPAIR_ATTEMPTS),
    )
    .option('--max-tokens <n>', 'completion tokens per judge call', String(DEFAULT_JUDGE_SAMPLING.maxTokens))
    .option(
      '--temperature <t>',
      `sampling temperature (openai-compatible: default ${DEFAULT_JUDGE_SAMPLING.temperature}; openai: sent only when given; anthropic: none)`,
    )
    .option(
      '--no-thinking',
      'ask for no thinking (openai-compatible: chat_template_kwargs.enable_thinking false; anthropic: thinking disabled)',
    )
    .option('--thinking-budget <tokens>', "anthropic: thinking tokens (at least 1024), or 'adaptive'")
    .option('--reasoning-effort <level>', `openai, anthropic: ${REASONING_EFFORTS.join(', ')}`)
    .option('--budget <tokens>', 'tokens per workspace bundle', String(DEFAULT_BUNDLE_BUDGET.totalTokens))
    .option(
      '--tokenizer <dir>',
      'model directory with tokenizer.json and tokenizer_config.json (default: Qwen3)',
    )
    .option('--out <file>', 'also write the judgment record (JSON) to this file')
    .option('--json', 'print the judgment record as JSON')
    .action(lazyAction(async () => (await import('../commands/judge.js')).judgeAction));
}
