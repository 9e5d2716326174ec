import type { Counts } from './counts.js';
import { definitions, envelope, type ReportWindow } from './reports.js';

/** The vocabulary every report uses (rule 10). */
export const vocabulary = {
  terms: [
    {
      term: 'answer',
      definition: 'One AI answer to one prompt from one model (answer engine) asked from one location, collected at run_at.',
    },
    { term: 'run_at', definition: 'When the answer was collected (ISO 8601 UTC). Reports bucket answers by the UTC day of run_at.' },
    {
      term: 'normalised URL',
      definition:
        'A cited URL without scheme, leading www., default port, fragment, tracking parameters (utm_*, gclid, fbclid, msclkid, ref, ...) or trailing slash, with sorted query parameters. Pages are normalised URLs; domains are their hosts.',
    },
    {
      term: 'tier',
      definition:
        'Every cited URL is in exactly one tier: primary (Owned), tracked (Tracked) or secondary (External). URLs no rule matches are secondary.',
    },
    {
      term: 'tracked source rule',
      definition:
        'Matches a normalised URL by domain (the host or any subdomain), host (exactly), path_prefix (host and path, at a segment boundary) or exact_url, and assigns a tier. The organization\u2019s websites act as read-only primary domain rules (source_origin published).',
    },
    {
      term: 'rule precedence',
      definition:
        'When several rules match, the most specific wins: exact_url, then path_prefix (longest first), then host, then domain (longest first); equal specificity: the higher tier, then the older rule.',
    },
    { term: 'cited_run_count (D)', definition: definitions.cited_run_count },
    { term: 'cited_total (S)', definition: definitions.cited_total },
    { term: 'citation rate', definition: definitions.citation_rate },
    { term: 'citation share', definition: definitions.citation_share },
    { term: 'citation coverage', definition: definitions.coverage },
    { term: 'source share', definition: definitions.source_share },
    { term: 'registrable domain', definition: definitions.registrable_domain },
    { term: 'source rule', definition: definitions.source_rule },
    {
      term: 'mention',
      definition:
        'One occurrence of a brand\u2019s name or alias in the answer text, case-insensitive, as a whole word (overlapping names of one brand count once). A brand the producer lists but the text spells differently counts once.',
    },
    {
      term: 'brand extraction',
      definition:
        'When the producer lists no brands, the brands of an answer are its bold phrases (**Name**) and the leading capitalised words (one to four) of numbered or bulleted list items, plus the organization and tracked competitors found by name.',
    },
    { term: 'mention_total', definition: 'Mention instances of the organization (its brand name and aliases).' },
    {
      term: 'brand_mention_total',
      definition: 'Mention instances of every brand named, tracked or not. Brands that are not tracked are counted here but never named.',
    },
    {
      term: 'tracked_mention_total',
      definition: 'Mention instances of the organization plus its tracked competitors. Reported, never a denominator of share of voice.',
    },
    { term: 'share of voice', definition: definitions.share_of_voice },
    {
      term: 'won',
      definition: 'An answer is won when it names the organization and names it before every other brand (first occurrence in the text).',
    },
    { term: 'lost', definition: 'An answer is lost when it names at least one tracked competitor and does not name the organization.' },
    {
      term: 'prompt outcome',
      definition:
        'Over a window, a prompt is won when its won answers outnumber its lost answers, lost when the reverse, tied when equal and above zero, none otherwise. prompts_won and prompts_lost count prompts by outcome.',
    },
    {
      term: 'latest answer',
      definition:
        'The answer with the greatest run_at per prompt, model and location; the only one whose text, citations and mentions are kept. An older answer arriving late is counted but never replaces it.',
    },
    {
      term: 'ratio',
      definition:
        'An object { value, display }: value is the unrounded fraction from 0 to 1, null (never 0) when the denominator is zero; display is a percentage with one decimal, or n/a.',
    },
    { term: 'data_quality', definition: 'no_data when the window holds no answers, low_sample under 30 answers, ok otherwise.' },
  ],
  rules: [
    'Every response is scoped to the organization of the credential.',
    'Every cited URL is in exactly one tier; tiers partition citations, not answers.',
    'D is cited_run_count; S is cited_total.',
    'Rates and coverage divide by D and count distinct answers; shares divide by S and count citation instances. Per-tier rates can sum above 100%; per-tier shares sum to exactly 100%.',
    'share_of_voice = mention_total / brand_mention_total.',
    'Full text, citations and mentions are kept only for the latest answer per prompt, model and location; history is daily additive counts.',
    'On answers/latest, from and to filter each answer\u2019s run_at; a combination whose latest answer is outside the window is hidden.',
    'Every report carries window, totals, data_quality, notes and definitions.',
    'Every ratio is { value, display }, null when its denominator is zero.',
    'Only analytics endpoints accept sort and order; an unknown sort key is 400.',
  ],
};

/**
 * GET /org/analytics/glossary (rules 8 and 10): the vocabulary, in the envelope
 * every analytics response carries. A vocabulary has no window of its own, so
 * the envelope is the one every report uses when from and to are omitted (the
 * default window, no filter) with the organization's totals over it: the terms
 * can be checked against real figures, and the fields are never missing.
 */
export function glossaryReport(window: ReportWindow, totals: Counts) {
  return envelope(
    window,
    totals,
    [
      'The glossary is a vocabulary, not a report over a window: window is the default window every report uses when from and to are omitted (the last 30 UTC days ending today, no filter), and totals and data_quality are the organization\u2019s counts over it.',
      'definitions maps each term to its definition; terms lists the same pairs in reading order, and rules the ten analytics rules.',
    ],
    Object.fromEntries(vocabulary.terms.map((t) => [t.term, t.definition])),
    vocabulary,
  );
}
