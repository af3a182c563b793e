// The recording proxy in its own process, as `mass proxy` runs it: prints its URL.
import { startRecordingProxy } from '../src/proxy/recording-proxy.js';

const [upstream, logFile] = process.argv.slice(2);
const proxy = await startRecordingProxy({
  upstream: upstream!,
  listen: { host: '127.0.0.1', port: 0 },
  logFile: logFile!,
});
console.log(proxy.url);
process.on('SIGTERM', () => void proxy.close().then(() => process.exit(0)));
