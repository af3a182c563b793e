import type { Role } from '../config/endpoint.js';
import type { SpendStage } from '../config/prices.js';
import { addCost, emptyCostTotal, type CostTotal } from './cost-total.js';
import type { SpendRow } from './spend-journal.js';

/** What a set of spend rows adds up to. */
export interface Spent {
  calls: number;
  /** Input plus output tokens. */
  tokens: number;
  promptTokens: number;
  completionTokens: number;
  cost: CostTotal;
}

export interface SpendFilter {
  stage?: SpendStage;
  label?: string;
  role?: Role;
}

/** Spending summed from journal rows, one row per key (the last written wins). */
export class SpendLedger {
  private readonly rows = new Map<string, SpendRow>();

  constructor(rows: Iterable<SpendRow> = []) {
    for (const row of rows) this.add(row);
  }

  add(row: SpendRow): void {
    this.rows.set(row.key, row);
  }

  has(key: string): boolean {
    return this.rows.has(key);
  }

  /** The rows that match every field the filter gives. */
  spent(filter: SpendFilter = {}): Spent {
    const spent: Spent = {
      calls: 0,
      tokens: 0,
      promptTokens: 0,
      completionTokens: 0,
      cost: emptyCostTotal(),
    };
    for (const row of this.rows.values()) {
      if (filter.stage !== undefined && row.stage !== filter.stage) continue;
      if (filter.label !== undefined && row.label !== filter.label) continue;
      if (filter.role !== undefined && row.role !== filter.role) continue;
      spent.calls += row.calls;
      spent.promptTokens += row.promptTokens;
      spent.completionTokens += row.completionTokens;
      spent.tokens += row.promptTokens + row.completionTokens;
      addCost(spent.cost, row.cost, row.calls);
    }
    return spent;
  }

  /** Each (stage, label, role) with what it spent, in the order first seen. */
  groups(): Array<{ stage: SpendStage; label: string; role: Role; spent: Spent }> {
    const seen = new Map<string, { stage: SpendStage; label: string; role: Role }>();
    for (const row of this.rows.values()) {
      seen.set(`${row.stage}\u0000${row.label}\u0000${row.role}`, row);
    }
    return [...seen.values()].map(({ stage, label, role }) => ({
      stage,
      label,
      role,
      spent: this.spent({ stage, label, role }),
    }));
  }
}
