import type { Command } from 'commander';

import { SystemError, UserError } from '../../errors.js';
import { DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_RESPONSE_BYTES } from '../../proxy/bounded-body.js';
import { parseListenAddress } from '../../proxy/listen-address.js';
import { USAGE_PATH, startRecordingProxy } from '../../proxy/recording-proxy.js';
import { parsePositiveInteger } from '../duration.js';

interface ProxyFlags {
  upstream: string;
  listen: string;
  log: string;
  meterStreams: boolean;
  maxRequestBytes: string;
  maxResponseBytes: string;
}

export function registerProxy(program: Command): void {
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
    .action(async (options: ProxyFlags) => {
      const proxy = await startRecordingProxy({
        upstream: options.upstream,
        listen: parseListenAddress(options.listen),
        logFile: options.log,
        meterStreams: options.meterStreams,
        maxRequestBytes: positiveBytes(options.maxRequestBytes, '--max-request-bytes'),
        maxResponseBytes: positiveBytes(options.maxResponseBytes, '--max-response-bytes'),
        serveUsage: true,
      });
      const address = proxy.address;
      const where = 'socketPath' in address ? `unix socket ${address.socketPath}` : proxy.url;
      console.error(
        `mass proxy: listening on ${where}, relaying to ${options.upstream}, recording to ${options.log}`,
      );
      console.error(
        `mass proxy: forwarding POST /v1/chat/completions and GET /v1/models; running token totals at ${'socketPath' in address ? '' : proxy.url}${USAGE_PATH}; Ctrl-C to stop`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await proxy.close();
      console.error(`mass proxy: stopped; token totals per model: ${JSON.stringify(proxy.meter.snapshot())}`);
      if (proxy.logError) {
        throw new SystemError(
          `could not write every row to ${options.log}: ${proxy.logError.message}; the log is incomplete`,
        );
      }
    });
}

function positiveBytes(text: string, flag: string): number {
  const bytes = parsePositiveInteger(text, flag);
  if (bytes === 0) throw new UserError(`${flag} must be above zero`);
  return bytes;
}
