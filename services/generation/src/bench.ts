/** What test/bench/generation.bench.ts drives in process: the composer and the verification step of a run. */
export { composeDeterministic, type SectionInput, type DraftedSection } from './domain/composer.js';
export { verifySections } from './app/verification.js';
export { createLexicalFactChecker } from './checker.js';
export { totalsOf } from './domain/draft.js';
