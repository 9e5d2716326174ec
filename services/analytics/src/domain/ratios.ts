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

/**
 * Shares of one whole (rule 4: per-tier shares sum to exactly 100 percent).
 * Values are the unrounded fractions; displays are rounded to tenths of a
 * percent by the largest-remainder method so that they add up to 100.0%.
 */
export function shares(parts: number[], total: number): Ratio[] {
  if (total === 0) return parts.map(() => ({ value: null, display: 'n/a' }));
  const exact = parts.map((p) => (p * 1000) / total);
  const floors = exact.map(Math.floor);
  let left = 1000 - floors.reduce((a, b) => a + b, 0);
  const order = exact.map((e, i) => ({ i, r: e - floors[i]! })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    floors[i]! += 1;
    left -= 1;
  }
  return parts.map((p, i) => ({ value: p / total, display: percent(floors[i]!) }));
}
