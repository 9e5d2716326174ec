/** Splits prose into sentences: after . ! ? followed by space and a capital, digit, quote or bracket. */
export function splitSentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+(?=["'([\p{Lu}\p{N}])/u)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
