/**
 * Observed agreement and Cohen's κ of two raters over the same items:
 * κ = (p_o − p_e)/(1 − p_e), with p_e = Σ_c p_first(c)·p_second(c) the agreement expected if each
 * rater kept its own category shares but chose independently of the item. κ is null when p_e is 1
 * (both raters always give one and the same category: agreement by chance alone explains it all).
 */
export interface Agreement {
  items: number;
  agreement: number | null;
  kappa: number | null;
}

export function cohenKappa<Category>(first: readonly Category[], second: readonly Category[]): Agreement {
  if (first.length !== second.length) {
    throw new RangeError(`Cohen's κ: ${first.length} ratings against ${second.length}; rate the same items`);
  }
  const items = first.length;
  if (items === 0) return { items, agreement: null, kappa: null };
  const firstCounts = new Map<Category, number>();
  const secondCounts = new Map<Category, number>();
  let agreeing = 0;
  for (let index = 0; index < items; index++) {
    const one = first[index]!;
    const other = second[index]!;
    if (one === other) agreeing++;
    firstCounts.set(one, (firstCounts.get(one) ?? 0) + 1);
    secondCounts.set(other, (secondCounts.get(other) ?? 0) + 1);
  }
  const agreement = agreeing / items;
  let chance = 0;
  for (const [category, count] of firstCounts)
    chance += (count / items) * ((secondCounts.get(category) ?? 0) / items);
  // 1 − p_e below rounding noise means p_e is 1: every item in one shared category.
  const kappa = 1 - chance < 1e-12 ? null : (agreement - chance) / (1 - chance);
  return { items, agreement, kappa };
}
