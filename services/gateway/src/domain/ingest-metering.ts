/**
 * What an ingested version costs beyond the one unit its request reserved when
 * it was accepted: one unit (CREDIT_COST_INGEST) per started block of
 * `charsPerUnit` stored characters, the first block being the reserved one.
 * A version of 250,000 characters at 100,000 per unit costs 3 units: 1 at
 * acceptance and 2 when its extraction is stored.
 */
export function ingestExtraUnits(characters: number, charsPerUnit: number): number {
  if (!Number.isInteger(characters) || characters < 0) throw new RangeError(`characters must be a whole number, got ${characters}`);
  if (!Number.isInteger(charsPerUnit) || charsPerUnit < 1) throw new RangeError(`charsPerUnit must be positive, got ${charsPerUnit}`);
  return Math.max(1, Math.ceil(characters / charsPerUnit)) - 1;
}
