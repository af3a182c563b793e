// The judge's defaults, apart from the judge's code: `mass judge --help` shows them without loading it.
import type { SamplingParams } from '../model/types.js';
import type { BundleBudget } from './bundle.js';

/** The official judge settings: the episode's sampling with a larger output budget (MASS.md §2). */
export const DEFAULT_JUDGE_SAMPLING: Readonly<SamplingParams> = {
  temperature: 0.6,
  topP: 0.95,
  topK: 20,
  maxTokens: 49_152,
  enableThinking: true,
};

export const DEFAULT_MAX_REPAIR_ATTEMPTS = 2;

export const DEFAULT_BUNDLE_BUDGET: Readonly<BundleBudget> = {
  totalTokens: 32_000,
  preflightTokens: 2_000,
  integrityTokens: 2_000,
  treeTokens: 2_000,
  treeEntries: 150,
  dataTokens: 1_500,
  dataFileTokens: 600,
  reportTokens: 8_000,
  resultsTokens: 6_000,
  resultFileTokens: 2_500,
  codeTokens: 7_000,
  codeFileTokens: 3_500,
  processTokens: 4_000,
};
