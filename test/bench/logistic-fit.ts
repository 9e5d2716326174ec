/**
 * A plain logistic regression for the benchmark's few parameters: features
 * standardised, full-batch gradient descent with a little L2, weights given
 * back on the features' own scale (so the service applies them to raw values).
 */
export interface Fitted<F extends string> {
  bias: number;
  weights: Record<F, number>;
}

export function fitLogistic<F extends string>(
  names: readonly F[],
  rows: { x: Record<F, number>; y: 0 | 1; weight?: number }[],
  options: { l2?: number; iterations?: number; rate?: number } = {},
): Fitted<F> {
  const l2 = options.l2 ?? 1e-3;
  const iterations = options.iterations ?? 800;
  const rate = options.rate ?? 0.5;
  const k = names.length;
  const n = rows.length;
  const mean = names.map((f) => rows.reduce((s, r) => s + r.x[f], 0) / Math.max(1, n));
  const sd = names.map((f, j) => Math.sqrt(rows.reduce((s, r) => s + (r.x[f] - mean[j]!) ** 2, 0) / Math.max(1, n)) || 1);
  const X = rows.map((r) => names.map((f, j) => (r.x[f] - mean[j]!) / sd[j]!));
  const w = new Array<number>(k).fill(0);
  let b = 0;
  const totalWeight = rows.reduce((s, r) => s + (r.weight ?? 1), 0) || 1;
  for (let it = 0; it < iterations; it++) {
    const gw = new Array<number>(k).fill(0);
    let gb = 0;
    for (let i = 0; i < n; i++) {
      let z = b;
      for (let j = 0; j < k; j++) z += w[j]! * X[i]![j]!;
      const p = 1 / (1 + Math.exp(-z));
      const e = (p - rows[i]!.y) * (rows[i]!.weight ?? 1);
      for (let j = 0; j < k; j++) gw[j]! += e * X[i]![j]!;
      gb += e;
    }
    for (let j = 0; j < k; j++) w[j]! -= rate * (gw[j]! / totalWeight + l2 * w[j]!);
    b -= rate * (gb / totalWeight);
  }
  const weights = {} as Record<F, number>;
  let bias = b;
  names.forEach((f, j) => {
    weights[f] = w[j]! / sd[j]!;
    bias -= (w[j]! * mean[j]!) / sd[j]!;
  });
  return { bias, weights };
}
