import type { Lineage } from '../config/rsi-settings.js';
import { UserError } from '../errors.js';
import { adapterBaseOf, type ModelGeneration } from '../records/model-generation.js';
import type { ModelRegistry } from '../records/registry.js';

/** What the next generation is trained over and from. */
export interface NextTraining {
  /** The generation whose full weights the LoRA goes over. */
  base: ModelGeneration;
  /** The adapter the LoRA starts from; absent for a fresh LoRA. */
  initAdapter?: string;
  /** The new generation's `adapterBase` in the registry; absent when its adapter goes over its parent. */
  adapterBase?: string;
}

/**
 * `merged` (the paper's): a fresh LoRA over the parent's full weights (its adapter merged into its own parent's).
 * `adapters`: every generation one adapter over the same full weights (L0's): the LoRA goes over the weights the
 * parent's adapter applies to and starts from that adapter, so vLLM's runtime LoRA can serve every generation over
 * the one base model it was started with.
 */
export function nextTraining(
  lineage: Lineage,
  registry: ModelRegistry,
  parent: ModelGeneration,
): NextTraining {
  if (lineage === 'merged') return { base: parent };
  const baseName = adapterBaseOf(parent);
  if (baseName === null) return { base: parent, adapterBase: parent.name };
  if (parent.adapterPath === undefined) {
    throw new UserError(
      `generation ${parent.name} has no adapter, only merged weights, and rsi.lineage adapters trains each ` +
        `generation from its parent's adapter: train ${parent.name} again with a trainer that leaves its adapter, ` +
        'or use rsi.lineage merged',
    );
  }
  const base = registry.require(baseName);
  return { base, initAdapter: parent.adapterPath, adapterBase: base.name };
}
