import { stemmer } from 'stemmer';

/**
 * Text analysis shared by query parsing and answer composition: lowercase
 * word tokens, English stopwords, Porter stems. The FTS5 adapter uses SQLite's
 * own porter tokenizer on the indexed side, which stems the same way.
 */

// A compact English stopword list (Lucene's plus common question words).
const STOPWORDS = new Set(
  (
    'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with ' +
    'what which who whom whose when where why how does do did can could should would may might must shall has have had having been being ' +
    'i me my we our you your he him his she her its them am about above after again against all any because before below between both ' +
    'during each few from further here more most other over own same so some than too under until up very were while also just only ' +
    'please tell show give find explain describe know want need'
  ).split(' '),
);

export const isStopword = (word: string): boolean => STOPWORDS.has(word);

/** Lowercase letter/digit runs, accents folded. */
export function words(text: string): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

export const stem = (word: string): string => (/^\p{L}+$/u.test(word) ? stemmer(word) : word);

/** Distinct content words of a query, stopwords removed unless nothing else is left. */
export function queryTerms(text: string): string[] {
  const all = words(text);
  const content = all.filter((w) => !isStopword(w));
  return [...new Set(content.length > 0 ? content : all)];
}

/** Stems of the content words, for overlap scoring. */
export const contentStems = (text: string): string[] =>
  words(text)
    .filter((w) => !isStopword(w))
    .map(stem);
