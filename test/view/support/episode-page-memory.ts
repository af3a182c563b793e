// Run by viewer-memory.e2e.test.ts in a process of its own: asks the viewer for episode pages and prints, as one JSON
// line, the process's peak resident memory before and after, so the figure is this request's and nothing else's.
import { respond } from '../../../src/view/respond.js';

const [root, warmUp, ...targets] = process.argv.slice(2);
const peakBytes = () => process.resourceUsage().maxRSS * 1024;

// Loads every module and warms the page code on a small episode first.
await respond(root!, 'GET', warmUp!);
const before = peakBytes();
const pages = [];
for (const target of targets) {
  const answer = await respond(root!, 'GET', target);
  const body = String(answer.body);
  const notes = /<section class="notes" id="notes">([\s\S]*?)<\/section>/.exec(body)?.[1] ?? '';
  pages.push({
    target,
    status: answer.status,
    bytes: body.length,
    notes: [...notes.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((match) => match[1]!.replace(/\s+/g, ' ').trim()),
  });
}
process.stdout.write(`${JSON.stringify({ before, after: peakBytes(), pages })}\n`);
