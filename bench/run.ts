// `npm run bench`: every benchmark, printed as JSON. Figures are ratios measured side by side in one run.
import { benchProxy } from './proxy.bench.js';

const only = process.argv[2];
const benchmarks: Record<string, () => Promise<Record<string, unknown>>> = {
  proxy: () => benchProxy(),
};

for (const [name, run] of Object.entries(benchmarks)) {
  if (only && only !== name) continue;
  console.error(`bench: ${name}…`);
  console.log(JSON.stringify({ benchmark: name, ...(await run()) }, null, 2));
}
