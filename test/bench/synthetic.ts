/** What the analytics benchmarks build their synthetic answers from, so they measure the same kind of answers. */

/** Deterministic PRNG (mulberry32) so every run builds the same answers. */
export function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The sites answers cite: the organization's ten, twenty of a competitor's, the rest anyone's. */
export const DOMAINS = Array.from({ length: 200 }, (_, i) => (i < 10 ? `acme${i}.com` : i < 30 ? `globex${i}.com` : `site${i}.org`));
export const BRANDS = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay'];
