/**
 * The fact checker's port: text in, a verdict per sentence with the spans that
 * back it. Generation checks every draft with it before anything can be
 * published, and POST /org/content/verify exposes it to users. The embedded
 * checker needs no model; an LLM judge may add a second opinion.
 */

/** A passage of the knowledge base a sentence may be checked against. */
export interface EvidencePassage {
  content_id: string;
  version_id: string;
  /** `<version_id>:<chunk_index>`. */
  chunk_id: string;
  text: string;
  title?: string;
  /** Retrieval score, when the passage came from a search. */
  score?: number;
}

export type FactVerdict = 'supported' | 'unsupported' | 'contradicted' | 'not_factual';

export interface SentenceSupport {
  content_id: string;
  version_id: string;
  chunk_id: string;
  /** The span of the passage that backs the sentence (verbatim). */
  quote: string;
  /** 0..1: how strongly this passage backs the sentence. */
  score: number;
}

export interface CheckedSentence {
  index: number;
  text: string;
  /** Offsets of the sentence in the checked text (UTF-16 code units, end exclusive). */
  start: number;
  end: number;
  verdict: FactVerdict;
  /** Best passages first; empty for not_factual and for unsupported with nothing close. */
  support: SentenceSupport[];
  /** Why a sentence is not supported, in words a person reads (e.g. "number 12% differs from the source's 21%"). */
  reason?: string;
  /** The 1-based source numbers of its [n] markers, when it has any. */
  cited?: number[];
  /** The LLM judge's view, when one is configured and the sentence was put to it. */
  second_opinion?: SecondOpinion;
}

/**
 * A chat model's verdict on a sentence given the quoted spans. It can only make
 * the result stricter, except for a sentence the embedded check found merely
 * worded differently from its closest source (no number, direction, negation or
 * name at odds), which the judge may accept as supported.
 */
export interface SecondOpinion {
  model: string;
  verdict?: 'supported' | 'unsupported' | 'contradicted';
  reason?: string;
  /** Set instead of a verdict when the judge could not be asked or answered nonsense; the embedded verdict stands. */
  error?: string;
}

/** Finds passages for a claim: the knowledge base's search, limited to the caller's scope. */
export type RetrievePassages = (claim: string, limit: number) => Promise<EvidencePassage[]>;

export interface FactCheckRequest {
  text: string;
  /**
   * Passages the text cites with [n] markers (n is 1-based into this list).
   * A sentence with markers is checked against what it cites first; one
   * without markers (or whose cited passages do not back it) is checked against
   * what `retrieve` finds.
   */
  cited?: EvidencePassage[];
  retrieve?: RetrievePassages;
  /**
   * Words the text may use in place of the sources' (a brand kit's preferred
   * terms): wherever a passage or the text has one of `instead_of`, it reads as `term`.
   */
  equivalents?: Equivalent[];
}

/** A term and the words it stands in for ("customers" instead of "clients", "users"). */
export interface Equivalent {
  term: string;
  instead_of: string[];
}

export interface FactChecker {
  check(request: FactCheckRequest): Promise<CheckedSentence[]>;
}
