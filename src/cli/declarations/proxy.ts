import type { Command } from 'commander';

import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_RESPONSE_BYTES } from '../../proxy/bounded-body.js';
import { lazyAction } from './lazy-action.js';

export function declareProxy(program: Command): void {
  program
    .command('proxy')
    .description(
      'Run the recording proxy between an agent harness and its model server; one JSONL row per request',
    )
    .requiredOption(
      '--upstream <url>',
      'the model server, e.g. http://127.0.0.1:8000 (a trailing /v1 is fine)',
    )
    .requiredOption('--listen <address>', 'host:port, or a Unix socket path for sandboxes without a network')
    .requiredOption('--log <file>', 'the JSONL request log (appended to)')
    .option('--no-meter-streams', 'do not ask the upstream for usage on streams whose client did not')
    .option(
      '--max-request-bytes <n>',
      'request bodies larger than this are refused (413) unread',
      String(DEFAULT_MAX_REQUEST_BYTES),
    )
    .option(
      '--max-response-bytes <n>',
      'an upstream answer is cut past this many bytes',
      String(DEFAULT_MAX_RESPONSE_BYTES),
    )
    .action(lazyAction(async () => (await import('../commands/proxy.js')).proxyAction));
}
