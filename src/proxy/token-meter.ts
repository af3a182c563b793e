import type { TokenUsage } from '../model/types.js';

export interface ModelTotals {
  requests: number;
  failedRequests: number;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  /** Prompt tokens the provider served from its cache, as it reported them. */
  cachedPromptTokens?: number;
  /** US dollars the provider reported for its calls (OpenRouter's `usage.cost`), and how many calls reported one. */
  reportedCostUsd?: number;
  reportedCostCalls?: number;
}

/** Running token totals per model name, readable at any moment while the proxy runs. */
export class TokenMeter {
  private readonly totals = new Map<string, ModelTotals>();
  /** Completion tokens of all models together. */
  completionTokens = 0;

  record(model: string, usage: TokenUsage | null, failed: boolean): void {
    let totals = this.totals.get(model);
    if (!totals) {
      totals = { requests: 0, failedRequests: 0, promptTokens: 0, completionTokens: 0, reasoningTokens: 0 };
      this.totals.set(model, totals);
    }
    totals.requests++;
    if (failed) totals.failedRequests++;
    if (usage) {
      totals.promptTokens += usage.promptTokens;
      totals.completionTokens += usage.completionTokens;
      this.completionTokens += usage.completionTokens;
      totals.reasoningTokens += usage.reasoningTokens;
      if (usage.cachedPromptTokens) {
        totals.cachedPromptTokens = (totals.cachedPromptTokens ?? 0) + usage.cachedPromptTokens;
      }
      if (usage.cost?.source === 'reported') {
        totals.reportedCostUsd = (totals.reportedCostUsd ?? 0) + usage.cost.usd;
        totals.reportedCostCalls = (totals.reportedCostCalls ?? 0) + 1;
      }
    }
  }

  snapshot(): Record<string, ModelTotals> {
    return Object.fromEntries([...this.totals].map(([model, totals]) => [model, { ...totals }]));
  }
}
