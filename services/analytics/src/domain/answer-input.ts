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
  if (typeof o.run_at !== 'string' || !ISO.test(o.run_at) || Number.isNaN(Date.parse(o.run_at)))
    errs.push('run_at is required: an ISO 8601 date-time with a time zone');
  else if (Date.parse(o.run_at) > now.getTime() + FUTURE_SLACK_MS) errs.push('run_at is in the future');
  if (typeof o.text !== 'string' || o.text.length > 200000) errs.push('text is required: a string of at most 200000 characters');
  if (!Array.isArray(o.citations) || o.citations.length > 500)
    errs.push('citations is required: an array of at most 500 URLs (may be empty)');
  else
    o.citations.forEach((c, i) => {
      if (typeof c !== 'string' || c.length > 4096 || !normalizeUrl(c)) errs.push(`citations[${i}] is not an http(s) URL`);
    });
  if (o.brands !== undefined) {
    if (!Array.isArray(o.brands) || o.brands.length > 200) errs.push('brands must be an array of at most 200 names');
    else
      o.brands.forEach((b, i) => {
        if (typeof b !== 'string' || !b.trim() || b.length > 200) errs.push(`brands[${i}] must be a name of 1 to 200 characters`);
      });
  }
  if (errs.length) return { ok: false, errors: errs };
  return {
    ok: true,
    value: {
      ...(o.answer_id !== undefined && { answer_id: (o.answer_id as string).toLowerCase() }),
      prompt_id: (o.prompt_id as string).toLowerCase(),
      model: (o.model as string).trim(),
      location: o.location === undefined ? DEFAULT_LOCATION : (o.location as string).trim(),
      run_at: new Date(o.run_at as string).toISOString(),
      text: o.text as string,
      citations: o.citations as string[],
      ...(o.brands !== undefined && { brands: (o.brands as string[]).map((b) => b.trim()) }),
    },
  };
}
