/**
 * Rules for what a source sentence needs, or says, beyond its own words: a
 * reference back to the sentence before it, the source author's own voice, a
 * pointer to another page, a reference to the source's layout. An extractive
 * draft lifts sentences out of their documents; these say which ones cannot
 * stand where the draft puts them.
 */

/**
 * Openings that lean on what came before: a pronoun or demonstrative subject ("This can be
 * useful ...", "It returns ...", "They run ..."), a connective ("However, ...", "Also, ...",
 * "Instead, ...", "For example, ..."), a definite noun with nothing to name it ("The function
 * ...", "The latter ...", "The same ..."; "The `onRequest` hook" names its hook and stands alone).
 */
const LEANING_OPENER = new RegExp(
  String.raw`^["'“‘(]?(?:` +
    [
      String.raw`this|that|these|those|it|its|it's|they|them|their|theirs|he|she|his|her|such|here|both|either|neither|another`,
      String.raw`however|also|moreover|furthermore|additionally|otherwise|instead|then|thus|hence|so|similarly|likewise|finally|lastly|besides`,
      String.raw`nevertheless|nonetheless|still|meanwhile|consequently|accordingly|therefore|thereby|again|conversely|alternatively|afterwards|next`,
      String.raw`in addition|in contrast|in turn|in that case|in this case|in such cases?|in both cases|in either case|in other words|in particular`,
      String.raw`as a result|as such|as (?:mentioned|noted|shown|described|explained|seen|discussed)|on the other hand|on top of that|for (?:this|that|these) reasons?`,
      String.raw`for example|for instance|by contrast|by doing so|by default,? (?:it|they|this)|at this point|at that point|after that|before that|unlike|like (?:this|that)`,
      String.raw`the (?:latter|former|same|above|following|previous|preceding|next|rest|remaining|second|third|last|other|result|resulting|aforementioned)`,
      String.raw`the (?:(?:only|main|key|real|whole|same|other|first|second|last|next|previous|above|following)\s+)?(?:function|method|hook|option|plugin|property|parameter|argument|value|callback|object|handler|module|library|class|field|setting|variable|example|code|snippet|call|command|difference|reason|answer|solution|approach|problem|issue)s?(?!\s+\x60)`,
    ].join('|') +
    String.raw`)\b`,
  'i',
);

/** A demonstrative early in the sentence ("By calling this function with ..., it returns ..."). */
const EARLY_DEMONSTRATIVE = /\b(?:this|these|those|such)\s+[\p{L}`]/iu;
/** A pronoun early in the sentence whose noun is elsewhere ("Evaluate its behavior ...", "If it fails, ..."). */
const EARLY_PRONOUN = /\b(?:it|its|they|them|their)\b/i;
/** A subject left out: a list item's description ("Triggered when the server starts ...", "Called before ..."). */
const NO_SUBJECT =
  /^(?:\p{Lu}\p{Ll}+ed|Called|Run|Sent|Set|Thrown|Done|Given|Known|Shown|Used|Made)\s+(?:when|whenever|before|after|by|if|once|during|on|at|with|for|to|in|as|upon|only)\b/u;

/** Whether a sentence's subject or opening refers back to a sentence before it, so that it cannot open a paragraph. */
export function refersBack(sentence: string): boolean {
  const s = sentence.trim();
  if (LEANING_OPENER.test(s) || NO_SUBJECT.test(s)) return true;
  const opening = s.split(/\s+/).slice(0, 8).join(' ');
  if (
    EARLY_PRONOUN.test(
      s
        .replace(/`[^`]*`/g, ' ')
        .split(/\s+/)
        .slice(0, 6)
        .join(' '),
    )
  )
    return true;
  const clause = opening.split(/[,;:]/)[0]!;
  return EARLY_DEMONSTRATIVE.test(clause) || (clause !== opening && EARLY_DEMONSTRATIVE.test(opening));
}

/**
 * The source author's own person: I, me, my, we, us, our, you, your, let's ("However, what I
 * didn't tell you is ..."). "I/O" and "i.e." are not the pronoun.
 */
const AUTHOR_VOICE =
  /(?<![\p{L}\p{N}_'’./-])(?:I(?![\p{L}\p{N}/.])|I['’](?:m|ve|d|ll)|(?:me|my|mine|myself|we|we['’](?:re|ve|d|ll)|us|our|ours|ourselves|you|you['’](?:re|ve|d|ll)|your|yours|yourself|yourselves|let['’]s)(?![\p{L}\p{N}_]))/iu;

/** Whether the sentence speaks as its author or to its reader (first or second person). */
export function authorVoice(sentence: string): boolean {
  // "I" is the pronoun only as a capital; the other forms in any case.
  const m = AUTHOR_VOICE.exec(sentence.replace(/`[^`]*`/g, ' '));
  if (!m) return false;
  return m[0] !== 'i';
}

/** Whether the brand kit asks for the reader to be addressed (second person) or the organization to speak as "we". */
export function voiceAllowsPerson(guidelines: { voice?: string; tone?: string; persona?: string; do_rules?: string[] }): boolean {
  const text = [guidelines.voice, guidelines.tone, guidelines.persona, ...(guidelines.do_rules ?? [])].filter(Boolean).join(' ');
  return /\b(?:second[- ]person|first[- ]person|address(?:es|ing)? the reader|speak(?:s|ing)? to the reader|(?:use|say|write(?: with)?) ["“]?(?:you|we)["”]?)\b/i.test(
    text,
  );
}

/**
 * A sentence that only sends the reader elsewhere: "See X for more information.", "Refer to
 * ...", "Check out ...", "For more details, see ...", "More information is available in ...".
 */
const POINTER =
  /^["'“‘(]?(?:see|refer to|check(?: out)?|read|visit|consult|look at|take a look|head (?:over|to)|go to|learn more|more (?:information|details|examples)|further (?:information|details|reading)|for (?:more|further|additional|full|complete|detailed) (?:information|details|info|examples?|reference|documentation)|details (?:are|can be found)|an? (?:full|complete|detailed) (?:list|reference|example|description))\b|\b(?:to learn more|for (?:more|further|additional|full|complete) (?:information|details|info)|(?:is|are) (?:documented|described|explained|covered|listed) (?:in|at|on|under) (?:the |its |their )?(?:\S+ )?(?:documentation|docs|page|section|guide|reference))\b/i;

export function isPointer(sentence: string): boolean {
  return POINTER.test(sentence.trim());
}

/**
 * A sentence about the source's own layout or another place in it ("This guide covers ...",
 * "The following example shows ...", "as shown below"): what it points at is not in the draft.
 */
const LAYOUT =
  /^(?:below|above)\b|\b(?:(?:see|shown|listed|described|given|explained|as|is|are)\s+(?:below|above)|(?:example|table|code|snippet|list|figure|diagram|option|section|steps?)s?\s+(?:below|above)|the following|as follows|(?:this|the (?:next|previous|above)|in this|in the (?:next|previous)) (?:document(?:ation)?|guide|page|section|chapter|article|tutorial|post|example|table|snippet|list|step))\b/i;

export function isLayoutReference(sentence: string): boolean {
  return LAYOUT.test(sentence.trim());
}
