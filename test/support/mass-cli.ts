// Runs the `mass` CLI from source, for tests: `node --import tsx test/support/mass-cli.ts <args>`.
import { main } from '../../src/cli/main.js';

await main(process.argv);
