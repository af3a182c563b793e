// The training-data builder on a generated log of about 10 million tokens (MASS_BENCH_DATA_TOKENS to change it),
// against the tokenizer alone on the same rendered text: is the builder limited by tokenisation or by its own code?
import {
  buildTrainingData,
  loadChatTemplateModel,
  toTemplateMessage,
  type ChatTemplateModel,
  type EpisodeSource,
  type TrainingDataSink,
} from '../src/distill/index.js';
import type { Thread } from '../src/records/threads.js';
import type { ChatMessage } from '../src/model/types.js';
import { seededRandom, type Random } from '../src/ranking/seeded-random.js';
import { makeLexicon, prose } from './support/prose.js';

const TARGET_TOKENS = Number(process.env.MASS_BENCH_DATA_TOKENS ?? 10_000_000);
/** Characters per Qwen3 token on the generated text, measured; only sizes the log, every figure is counted. */
const CHARACTERS_PER_TOKEN = 2.6;

export async function benchDataBuilder(): Promise<Record<string, unknown>> {
  const model = await loadChatTemplateModel();
  const random = seededRandom(20_261_129);
  const lexicon = makeLexicon(random, 20_000);
  const episodes = generateEpisodes(random, lexicon, TARGET_TOKENS * CHARACTERS_PER_TOKEN);

  // What the builder tokenises: each query segment rendered once (one segment per thread here).
  let started = performance.now();
  const texts = renderAll(episodes, model);
  const renderSeconds = seconds(started);
  const logTokens = tokenise(texts, model); // warms the tokenizer's caches for every timed run

  // The machine may be shared: the two are timed alternately, twice, and the faster run of each is kept.
  let tokenizerSeconds = Infinity;
  let builderSeconds = Infinity;
  let stats: Awaited<ReturnType<typeof buildTrainingData>> | undefined;
  for (let repeat = 0; repeat < 2; repeat++) {
    started = performance.now();
    tokenise(texts, model);
    tokenizerSeconds = Math.min(tokenizerSeconds, seconds(started));
    started = performance.now();
    stats = await buildTrainingData(episodes, { model, sink: countingSink().sink });
    builderSeconds = Math.min(builderSeconds, seconds(started));
  }

  const serialising = countingSink(true);
  started = performance.now();
  await buildTrainingData(episodes, { model, sink: serialising.sink });
  const withJsonSeconds = seconds(started);

  const total = stats!.splits.train.total;
  const rate = (count: number, time: number) => Math.round(count / time);
  return {
    log: {
      episodes: episodes.length,
      threads: episodes.reduce((sum, episode) => sum + episode.threads.length, 0),
      characters: texts.reduce((sum, text) => sum + text.length, 0),
      tokens: logTokens,
    },
    built: {
      windows: total.windows,
      windowTokens: total.tokens,
      supervisedTokens: total.supervisedTokens,
      perRole: Object.fromEntries(
        Object.entries(stats!.splits.train.perRole).map(([role, counts]) => [role, counts.windows]),
      ),
    },
    seconds: {
      renderOnly: round(renderSeconds),
      tokenizerAlone: round(tokenizerSeconds),
      builder: round(builderSeconds),
      builderWithJsonLines: round(withJsonSeconds),
    },
    throughput: {
      tokenizerAloneTokensPerSecond: rate(logTokens, tokenizerSeconds),
      builderLogTokensPerSecond: rate(logTokens, builderSeconds),
      builderWindowTokensPerSecond: rate(total.tokens, builderSeconds),
      builderSupervisedTokensPerSecond: rate(total.supervisedTokens, builderSeconds),
      builderWithJsonLinesSupervisedTokensPerSecond: rate(total.supervisedTokens, withJsonSeconds),
    },
    /** Builder time over tokenizer time on the same text: near 1 means the builder is limited by tokenisation. */
    builderOverTokenizer: round(builderSeconds / tokenizerSeconds),
    jsonLinesMegabytes: round(serialising.characters() / 1e6),
  };
}

function renderAll(episodes: EpisodeSource[], model: ChatTemplateModel): string[] {
  return episodes.flatMap((episode) =>
    episode.threads.map((thread) => {
      const segment = thread.segments[0]!;
      return model.render(segment.messages.map(toTemplateMessage), segment.tools);
    }),
  );
}

function tokenise(texts: string[], model: ChatTemplateModel): number {
  let tokens = 0;
  for (const text of texts) tokens += model.encode(text).length;
  return tokens;
}

function countingSink(serialise = false): { sink: TrainingDataSink; characters: () => number } {
  let characters = 0;
  return {
    sink: {
      window: (window) => {
        characters += serialise ? JSON.stringify(window).length : window.input_ids.length;
      },
      conversation: (conversation) => {
        if (serialise) characters += JSON.stringify(conversation).length;
      },
    },
    characters: () => characters,
  };
}

/** A thread: a header, then turns of reasoning, text and a tool call with its result; some long enough for several windows. */
function generateThread(
  random: Random,
  lexicon: string[],
  role: Thread['role'],
  id: string,
  prompt: string,
): Thread {
  const system =
    role === 'orchestrator'
      ? `You are Qwen Code, an interactive agent. ${prose(random, lexicon, 6_000)}`
      : `You are a general-purpose subagent. ${prose(random, lexicon, 3_000)}`;
  const messages: ChatMessage[] = [
    { role: 'system', content: system },
    {
      role: 'user',
      content: [
        { type: 'text', text: `<system-reminder>\n${prose(random, lexicon, 800)}\n</system-reminder>` },
        { type: 'text', text: prompt },
      ],
    },
  ];
  const turns = 10 + Math.floor(random() * (random() < 0.2 ? 120 : 40));
  for (let turn = 0; turn < turns; turn++) {
    const last = turn === turns - 1;
    const callId = `call_${id}_${turn}`;
    messages.push({
      role: 'assistant',
      content: prose(random, lexicon, last ? 1_500 : 200 + random() * 400),
      reasoning_content: prose(random, lexicon, 300 + random() * 1_500),
      ...(last
        ? {}
        : {
            tool_calls: [
              {
                id: callId,
                type: 'function' as const,
                function: {
                  name: role === 'orchestrator' ? 'agent' : 'run_shell_command',
                  arguments: JSON.stringify({ command: prose(random, lexicon, 100 + random() * 300) }),
                },
              },
            ],
          }),
    });
    if (!last)
      messages.push({
        role: 'tool',
        tool_call_id: callId,
        content: prose(random, lexicon, 200 + random() * 3_000),
      });
  }
  const responses = messages.flatMap((message, messageIndex) =>
    message.role === 'assistant'
      ? [{ seq: messageIndex, messageIndex, finishReason: 'stop', truncated: false }]
      : [],
  );
  return {
    schemaVersion: 1,
    threadId: id,
    role,
    firstSeq: 0,
    calls: responses.length,
    segments: [{ messages, tools: [], responses }],
    usage: { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 },
  };
}

function generateEpisodes(random: Random, lexicon: string[], characters: number): EpisodeSource[] {
  const episodes: EpisodeSource[] = [];
  let total = 0;
  for (let index = 0; total < characters; index++) {
    const task = `task-${index % 9}`;
    const prompt = `# Task ${task}\n\n${prose(random, lexicon, 2_000)}\n`;
    const episodeId = `episode-${index}`;
    const threads = [
      generateThread(random, lexicon, 'orchestrator', `${episodeId}-orchestrator`, prompt),
      ...Array.from({ length: 2 + Math.floor(random() * 5) }, (_, subagent) =>
        generateThread(
          random,
          lexicon,
          'subagent',
          `${episodeId}-subagent-${subagent}`,
          prose(random, lexicon, 1_000),
        ),
      ),
    ];
    for (const thread of threads) total += JSON.stringify(thread.segments[0]!.messages).length;
    episodes.push({
      episodeId,
      taskId: task,
      split: 'train',
      team: false,
      prompt,
      bareTask: prompt,
      threads,
    });
  }
  return episodes;
}

function seconds(started: number): number {
  return (performance.now() - started) / 1000;
}

function round(value: number): number {
  return Number(value.toFixed(2));
}
