import { normalizeUrl } from './urls.js';

/** An answer as the import endpoint accepts it (one item of the batch). */
export interface AnswerInput {
  answer_id?: string;
  prompt_id: string;
  model: string;
  location: string;
  run_at: string;
  text: string;
  citations: string[];
  brands?: string[];
}

export const DEFAULT_LOCATION = 'global';
/** Stands for an item whose text is not JSON (an NDJSON line that does not parse). */
export const UNPARSEABLE = Object.freeze({ unparseable: true });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const KNOWN = new Set(['answer_id', 'prompt_id', 'model', 'location', 'run_at', 'text', 'citations', 'brands']);
/** Answers collected more than this far in the future are a clock or data error. */
const FUTURE_SLACK_MS = 5 * 60_000;

/** 1 to 100 characters, and not '*', which names every model or location in the count rows' roll-ups. */
export const isName = (v: unknown) => typeof v === 'string' && v.trim().length >= 1 && v.length <= 100 && v.trim() !== '*';

/** Validates one import item; every problem is reported, not only the first. */
export function validateAnswerInput(item: unknown, now: Date): { ok: true; value: AnswerInput } | { ok: false; errors: string[] } {
  if (item === UNPARSEABLE) return { ok: false, errors: ['item is not valid JSON'] };
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return { ok: false, errors: ['item must be a JSON object'] };
  const o = item as Record<string, unknown>;
  const errs: string[] = [];
  for (const k of Object.keys(o)) if (!KNOWN.has(k)) errs.push(`unknown field ${k}`);
  if (o.answer_id !== undefined && (typeof o.answer_id !== 'string' || !UUID.test(o.answer_id))) errs.push('answer_id must be a uuid');
  if (typeof o.prompt_id !== 'string' || !UUID.test(o.prompt_id)) errs.push('prompt_id is required and must be a uuid');
  if (!isName(o.model)) errs.push('model is required: 1 to 100 characters, not *');
  if (o.location !== undefined && !isName(o.location)) errs.push('location must be 1 to 100 characters, not *');
  // Parsed once: the check, the future check and the normalised value all use it.
  const runAt = typeof o.run_at === 'string' && ISO.test(o.run_at) ? Date.parse(o.run_at) : Number.NaN;
  if (Number.isNaN(runAt)) errs.push('run_at is required: an ISO 8601 date-time with a time zone');
  else if (runAt > now.getTime() + FUTURE_SLACK_MS) errs.push('run_at is in the future');
  if (typeof o.text !== 'string' || o.text.length > 200000) errs.push('text is required: a string of at most 200000 characters');
  const citations = o.citations;
  if (!Array.isArray(citations) || citations.length > 500) errs.push('citations is required: an array of at most 500 URLs (may be empty)');
  else
    for (let i = 0; i < citations.length; i++) {
      if (!(i in citations)) continue; // a hole (not from JSON): skipped, as forEach did
      const c: unknown = citations[i];
      if (typeof c !== 'string' || c.length > 4096 || !normalizeUrl(c)) errs.push(`citations[${i}] is not an http(s) URL`);
    }
  const brands = o.brands;
  if (brands !== undefined) {
    if (!Array.isArray(brands) || brands.length > 200) errs.push('brands must be an array of at most 200 names');
    else
      for (let i = 0; i < brands.length; i++) {
        if (!(i in brands)) continue;
        const b: unknown = brands[i];
        if (typeof b !== 'string' || !b.trim() || b.length > 200) errs.push(`brands[${i}] must be a name of 1 to 200 characters`);
      }
  }
  if (errs.length) return { ok: false, errors: errs };
  // Built field by field in the order the fields always had (answer_id first when given), without spreading copies.
  const value = (o.answer_id !== undefined ? { answer_id: (o.answer_id as string).toLowerCase() } : {}) as AnswerInput;
  value.prompt_id = (o.prompt_id as string).toLowerCase();
  value.model = (o.model as string).trim();
  value.location = o.location === undefined ? DEFAULT_LOCATION : (o.location as string).trim();
  value.run_at = new Date(runAt).toISOString();
  value.text = o.text as string;
  value.citations = citations as string[];
  if (brands !== undefined) value.brands = (brands as string[]).map((b) => b.trim());
  return { ok: true, value };
}
