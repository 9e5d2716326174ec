/**
 * Rule 9: a ratio is { value, display }, value the unrounded fraction in [0, 1]
 * and null (never 0) when the denominator is zero; display is a string safe to
 * quote ("42.9%", or "n/a" for null).
 */
export interface Ratio {
  value: number | null;
  display: string;
}

const percent = (tenths: number) => `${(tenths / 10).toFixed(1)}%`;

export function ratio(numerator: number, denominator: number): Ratio {
  if (denominator === 0) return { value: null, display: 'n/a' };
  const value = numerator / denominator;
  return { value, display: percent(Math.round(value * 1000)) };
}

/** Every order of adding (all of them for up to four parts, else the given one). */
function orders(n: number): number[][] {
  if (n > 4) return [[...Array(n).keys()]];
  const perms = (rest: number[]): number[][] =>
    rest.length <= 1 ? [rest] : rest.flatMap((x, i) => perms([...rest.slice(0, i), ...rest.slice(i + 1)]).map((p) => [x, ...p]));
  return perms([...Array(n).keys()]);
}

const sumsToOne = (values: number[], sums: number[][]) => sums.every((order) => order.reduce((s, i) => s + values[i]!, 0) === 1);

/** The double `steps` units in the last place away from x (x > 0). */
function ulpStep(x: number, steps: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigInt64(0, view.getBigInt64(0) + BigInt(steps));
  return view.getFloat64(0);
}

/**
 * The fractions part / total, such that adding them gives exactly 1 in any
 * order. Plain division misses 1 by an ulp in about one case in twenty (1/6 +
 * 4/6 + 1/6 = 0.9999999999999999), which would break rule 4 for anyone who adds
 * the values; nudging one value by at most 3 ulps (a relative change under
 * 1e-15, far below any display) always restores it for three tiers.
 */
function exactFractions(parts: number[], total: number): number[] {
  const values = parts.map((p) => p / total);
  const sums = orders(parts.length);
  if (sumsToOne(values, sums)) return values;
  for (const steps of [1, -1, 2, -2, 3, -3])
    for (let i = 0; i < parts.length; i++) {
      if (parts[i] === 0 || parts[i] === total) continue;
      const nudged = [...values];
      nudged[i] = ulpStep(values[i]!, steps);
      if (sumsToOne(nudged, sums)) return nudged;
    }
  return values;
}

/**
 * Shares of one whole (rule 4: per-tier shares sum to exactly 100 percent).
 * Values are the fractions (exact to within 3 ulps, and adding up to exactly
 * 1); displays are rounded to tenths of a percent by the largest-remainder
 * method so that they add up to 100.0%.
 */
export function shares(parts: number[], total: number): Ratio[] {
  if (total === 0) return parts.map(() => ({ value: null, display: 'n/a' }));
  const values = exactFractions(parts, total);
  const exact = parts.map((p) => (p * 1000) / total);
  const floors = exact.map(Math.floor);
  let left = 1000 - floors.reduce((a, b) => a + b, 0);
  const order = exact.map((e, i) => ({ i, r: e - floors[i]! })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    floors[i]! += 1;
    left -= 1;
  }
  return parts.map((_, i) => ({ value: values[i]!, display: percent(floors[i]!) }));
}
