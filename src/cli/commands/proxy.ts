import type { Command } from 'commander';

import { SystemError } from '../../errors.js';
import { parseListenAddress } from '../../proxy/listen-address.js';
import { USAGE_PATH, startRecordingProxy } from '../../proxy/recording-proxy.js';

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
    .action(async (options: { upstream: string; listen: string; log: string; meterStreams: boolean }) => {
      const proxy = await startRecordingProxy({
        upstream: options.upstream,
        listen: parseListenAddress(options.listen),
        logFile: options.log,
        meterStreams: options.meterStreams,
      });
      const address = proxy.address;
      const where = 'socketPath' in address ? `unix socket ${address.socketPath}` : proxy.url;
      console.error(
        `mass proxy: listening on ${where}, relaying to ${options.upstream}, recording to ${options.log}`,
      );
      console.error(
        `mass proxy: running token totals at ${'socketPath' in address ? '' : proxy.url}${USAGE_PATH}; Ctrl-C to stop`,
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
