// Runs the `mass` CLI from source, for the benchmarks (bench/): `node --import tsx test/support/mass-cli.ts <args>`.
// Tests run the built CLI instead, bin/mass.js (test/support/cli.ts).
import { main } from '../../src/cli/main.js';

await main(process.argv);
