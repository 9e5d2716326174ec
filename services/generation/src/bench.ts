/** What test/bench/generation.bench.ts drives in process: the composer and the verification step of a run. */
export { composeDeterministic, type SectionInput, type DraftedSection } from './domain/composer.js';
export { verifySections } from './app/verification.js';
export { createLexicalFactChecker } from './checker.js';
export { totalsOf } from './domain/draft.js';
export { draftExtractive } from './drafting/extractive-drafter.js';
export { retrieveSections } from './drafting/section-passages.js';
export type { ContentKind, SectionSpec } from './domain/settings.js';
export { authorVoice, isPointer, refersBack } from './drafting/referents.js';
export { coverageOf } from './drafting/coverage.js';
export { describe as describePiece } from './drafting/description.js';
