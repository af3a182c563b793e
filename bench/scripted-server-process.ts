// A scripted model server in its own process, for benchmarks: prints its URL, serves one fixed reply forever.
import { startScriptedServer } from '../src/testing/scripted-server.js';
import { step } from '../src/toy/steps.js';

const content =
  'The strategy beats the benchmark out of sample after costs; see results/metrics.json. '.repeat(4);
// Optional model-like timing: milliseconds before the first byte, and between streamed chunks.
const [firstByteMs = 0, chunkDelayMs = 0] = process.argv.slice(2).map(Number);
const server = await startScriptedServer({
  chunkSize: 16,
  responder: () =>
    step.text(content, {
      reasoning: 'Check leakage first, then costs. '.repeat(6),
      delayMs: firstByteMs,
      chunkDelayMs,
    }),
});
console.log(server.url);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
