import { SystemError, UserError } from '../../errors.js';
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

export async function proxyAction(options: ProxyFlags): Promise<void> {
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
}

function positiveBytes(text: string, flag: string): number {
  const bytes = parsePositiveInteger(text, flag);
  if (bytes === 0) throw new UserError(`${flag} must be above zero`);
  return bytes;
}
