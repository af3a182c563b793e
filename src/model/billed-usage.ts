import { isRecord } from './stream-accumulator.js';
import { tokenUsageFromWire, WireUsage, type ChatResponse, type TokenUsage } from './types.js';

const billedOfErrors = new WeakMap<object, TokenUsage>();

/** The usage a JSON answer reports, if any: an answer that is no usable completion may still have been billed. */
export function usageOfAnswer(answer: unknown): TokenUsage | null {
  if (!isRecord(answer) || !isRecord(answer.usage)) return null;
  const parsed = WireUsage.safeParse(answer.usage);
  return parsed.success ? tokenUsageFromWire(parsed.data) : null;
}

/**
 * Several billed attempts of one call as one usage: tokens added, the cost summed when every attempt has one (else
 * left for the caller to compute from the summed tokens), `billedAttempts` their number.
 */
export function sumBilledUsage(usages: readonly TokenUsage[]): TokenUsage {
  const sum = (pick: (usage: TokenUsage) => number) =>
    usages.reduce((total, usage) => total + pick(usage), 0);
  const cached = sum((usage) => usage.cachedPromptTokens ?? 0);
  const costs = usages.map((usage) => usage.cost);
  const everyCost = costs.every((cost) => cost !== undefined);
  return {
    promptTokens: sum((usage) => usage.promptTokens),
    completionTokens: sum((usage) => usage.completionTokens),
    reasoningTokens: sum((usage) => usage.reasoningTokens),
    totalTokens: sum((usage) => usage.totalTokens),
    ...(cached > 0 ? { cachedPromptTokens: cached } : {}),
    ...(everyCost && costs.length > 0
      ? {
          cost: {
            usd: costs.reduce((total, cost) => total + cost!.usd, 0),
            source: costs.every((cost) => cost!.source === 'reported') ? 'reported' : 'computed',
          },
        }
      : {}),
    billedAttempts: sum((usage) => usage.billedAttempts ?? 1),
  };
}

/**
 * The attempts of one call that a provider answered with usage but that were not used: an answer that is no
 * completion (retried), or one the model made unusable. The provider bills them all the same, so the call's usage
 * counts them (`settle`), and a call that fails in the end carries them on its error (`billedUsageOf`).
 */
export class BilledAttempts {
  private readonly usages: TokenUsage[] = [];

  /** Parses one attempt's answer; an answer that does not parse is noted as billed when it reported usage. */
  parse<T>(answer: unknown, parse: (answer: unknown) => T): T {
    try {
      return parse(answer);
    } catch (error) {
      const usage = usageOfAnswer(answer);
      if (usage) this.usages.push(usage);
      throw error;
    }
  }

  /** The response with the earlier billed attempts in its usage. */
  settle(response: ChatResponse): ChatResponse {
    if (this.usages.length === 0) return response;
    return {
      ...response,
      usage: sumBilledUsage([...this.usages, ...(response.usage ? [response.usage] : [])]),
    };
  }

  /** The error, carrying what its call's attempts were billed. */
  fail(error: unknown): unknown {
    if (this.usages.length > 0) markBilled(error, sumBilledUsage(this.usages));
    return error;
  }
}

/** Notes on a failed call's error what its attempts were billed (see `billedUsageOf`). */
export function markBilled(error: unknown, usage: TokenUsage): void {
  if (typeof error === 'object' && error !== null) billedOfErrors.set(error, usage);
}

/** What a failed call's attempts were billed (answers with usage that were not used); null when none was. */
export function billedUsageOf(error: unknown): TokenUsage | null {
  return typeof error === 'object' && error !== null ? (billedOfErrors.get(error) ?? null) : null;
}
