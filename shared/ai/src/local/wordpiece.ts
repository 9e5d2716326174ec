/**
 * BERT WordPiece tokenization as described by a Hugging Face tokenizer.json
 * (BertNormalizer, BertPreTokenizer, WordPiece model, [CLS] A [SEP] template):
 * the inputs a BERT-family sentence-embedding model expects. Pure, no I/O.
 */

export interface WordPieceSpec {
  vocab: Map<string, number>;
  lowercase: boolean;
  stripAccents: boolean;
  unkToken: string;
  clsToken: string;
  sepToken: string;
  padId: number;
  prefix: string;
  maxCharsPerWord: number;
}

export interface Encoded {
  /** Token ids: [CLS] pieces… [SEP]. */
  ids: number[];
}

interface TokenizerJson {
  normalizer?: { type?: string; lowercase?: boolean; strip_accents?: boolean | null } | null;
  model?: {
    type?: string;
    vocab?: Record<string, number>;
    unk_token?: string;
    continuing_subword_prefix?: string;
    max_input_chars_per_word?: number;
  };
  padding?: { pad_id?: number } | null;
}

/** Reads the parts of a tokenizer.json this tokenizer needs; throws on anything that is not BERT WordPiece. */
export function wordPieceSpecOf(json: unknown): WordPieceSpec {
  const t = json as TokenizerJson;
  if (t?.model?.type !== 'WordPiece' || !t.model.vocab) throw new Error('tokenizer.json: not a WordPiece model');
  const vocab = new Map(Object.entries(t.model.vocab));
  const lowercase = t.normalizer?.lowercase ?? true;
  // BertNormalizer: strip_accents null follows lowercase.
  const stripAccents = t.normalizer?.strip_accents ?? lowercase;
  const spec: WordPieceSpec = {
    vocab,
    lowercase,
    stripAccents,
    unkToken: t.model.unk_token ?? '[UNK]',
    clsToken: '[CLS]',
    sepToken: '[SEP]',
    padId: t.padding?.pad_id ?? vocab.get('[PAD]') ?? 0,
    prefix: t.model.continuing_subword_prefix ?? '##',
    maxCharsPerWord: t.model.max_input_chars_per_word ?? 100,
  };
  for (const tok of [spec.unkToken, spec.clsToken, spec.sepToken])
    if (!vocab.has(tok)) throw new Error(`tokenizer.json: vocabulary has no ${tok}`);
  return spec;
}

const isControl = (c: string): boolean => {
  if (c === '\t' || c === '\n' || c === '\r') return false;
  return /\p{Cc}|\p{Cf}/u.test(c);
};
const isWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r' || /\p{Zs}/u.test(c);

/** BERT's punctuation: every ASCII non-letter/digit symbol, plus Unicode P*. */
export function isPunctuation(c: string): boolean {
  const cp = c.codePointAt(0)!;
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return /\p{P}/u.test(c);
}

const isCjk = (cp: number): boolean =>
  (cp >= 0x4e00 && cp <= 0x9fff) ||
  (cp >= 0x3400 && cp <= 0x4dbf) ||
  (cp >= 0x20000 && cp <= 0x2a6df) ||
  (cp >= 0x2a700 && cp <= 0x2b73f) ||
  (cp >= 0x2b740 && cp <= 0x2b81f) ||
  (cp >= 0x2b820 && cp <= 0x2ceaf) ||
  (cp >= 0xf900 && cp <= 0xfaff) ||
  (cp >= 0x2f800 && cp <= 0x2fa1f);

/** BertNormalizer: drop control characters, whitespace to spaces, CJK characters spaced, lowercase and strip accents. */
export function normalize(text: string, spec: Pick<WordPieceSpec, 'lowercase' | 'stripAccents'>): string {
  let out = '';
  for (const c of text) {
    const cp = c.codePointAt(0)!;
    if (cp === 0 || cp === 0xfffd || isControl(c)) continue;
    if (isWhitespace(c)) out += ' ';
    else if (isCjk(cp)) out += ` ${c} `;
    else out += c;
  }
  if (spec.stripAccents) out = out.normalize('NFD').replace(/\p{Mn}/gu, '');
  if (spec.lowercase) out = out.toLowerCase();
  return out;
}

/** BertPreTokenizer: split on whitespace, every punctuation character a word of its own. */
export function preTokenize(text: string): string[] {
  const words: string[] = [];
  let cur = '';
  for (const c of text) {
    if (isWhitespace(c)) {
      if (cur) words.push(cur);
      cur = '';
    } else if (isPunctuation(c)) {
      if (cur) words.push(cur);
      words.push(c);
      cur = '';
    } else cur += c;
  }
  if (cur) words.push(cur);
  return words;
}

/** Greedy longest-match-first WordPiece of one word; [UNK] when a part has no piece. */
export function wordPieces(word: string, spec: WordPieceSpec): number[] {
  const chars = [...word];
  if (chars.length > spec.maxCharsPerWord) return [spec.vocab.get(spec.unkToken)!];
  const out: number[] = [];
  let start = 0;
  while (start < chars.length) {
    let end = chars.length;
    let found: number | undefined;
    while (start < end) {
      const piece = (start > 0 ? spec.prefix : '') + chars.slice(start, end).join('');
      found = spec.vocab.get(piece);
      if (found !== undefined) break;
      end--;
    }
    if (found === undefined) return [spec.vocab.get(spec.unkToken)!];
    out.push(found);
    start = end;
  }
  return out;
}

/** A tokenizer for one vocabulary; words are memoized (text repeats a lot of them). */
export function createWordPieceTokenizer(spec: WordPieceSpec) {
  const cache = new Map<string, number[]>();
  const cls = spec.vocab.get(spec.clsToken)!;
  const sep = spec.vocab.get(spec.sepToken)!;
  return {
    spec,
    /** [CLS] pieces [SEP], truncated to maxTokens in all (the end of a long text is dropped). */
    encode(text: string, maxTokens = 512): Encoded {
      const ids = [cls];
      const room = Math.max(0, maxTokens - 2);
      outer: for (const word of preTokenize(normalize(text, spec))) {
        let pieces = cache.get(word);
        if (!pieces) {
          pieces = wordPieces(word, spec);
          if (cache.size > 50_000) cache.clear();
          cache.set(word, pieces);
        }
        for (const p of pieces) {
          if (ids.length - 1 >= room) break outer;
          ids.push(p);
        }
      }
      ids.push(sep);
      return { ids };
    },
  };
}

export type WordPieceTokenizer = ReturnType<typeof createWordPieceTokenizer>;
