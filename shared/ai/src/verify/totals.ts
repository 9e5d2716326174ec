import type { CheckedSentence } from './port.js';

/** Spec rule 9: value in [0, 1], null (never 0) when nothing is factual; display "42.9%" or "n/a". */
export interface SupportedRatio {
  value: number | null;
  display: string;
}

export interface FactCheckTotals {
  totals: { sentences: number; factual: number; supported: number; unsupported: number };
  supported_ratio: SupportedRatio;
}

/**
 * The totals POST /org/content/verify and drafts report: factual sentences are
 * all but not_factual ones; unsupported counts contradicted ones too; the ratio
 * is supported over factual.
 */
export function factCheckTotals(sentences: readonly Pick<CheckedSentence, 'verdict'>[]): FactCheckTotals {
  const factual = sentences.filter((s) => s.verdict !== 'not_factual').length;
  const supported = sentences.filter((s) => s.verdict === 'supported').length;
  const value = factual === 0 ? null : supported / factual;
  return {
    totals: { sentences: sentences.length, factual, supported, unsupported: factual - supported },
    supported_ratio: { value, display: value === null ? 'n/a' : `${(Math.round(value * 1000) / 10).toFixed(1)}%` },
  };
}
