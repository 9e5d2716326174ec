/**
 * What a tool's REST answer becomes before an assistant reads it: fields
 * renamed to the tools' vocabulary, a long text read a window at a time, list
 * items summarized unless `detail: 'full'`, the outcome first, paging hints
 * (total_count, next_offset, next_start_index), and last a hard cap so that no
 * result exceeds RESULT_CAP characters, with a line saying how to read on.
 */

/** The most characters a tool result's text may hold (an assistant's context is the limit). */
export const RESULT_CAP = 20_000;
/** The default window of a paged text (max_length). */
export const TEXT_WINDOW = 10_000;
/** Room kept for the note (it is both in the structured result and in its own text line). */
const NOTE_MAX = 450;

type Obj = Record<string, unknown>;

export interface Shaping {
  /** The field holding the main list (a REST array answer is `items`); paged with offset when the tool takes one. */
  list?: string;
  /** A list item as a summary (ids, titles, states, counts) unless detail is 'full'. */
  summarizeItem?: (item: Obj) => Obj;
  /** The whole result as a summary unless detail is 'full'. */
  summarize?: (result: Obj) => Obj;
  /** A long text field read a window at a time (start_index, max_length). */
  pagedText?: string;
  /** Result fields renamed, in the result and in the list's items. */
  rename?: Record<string, string>;
  /** Fields put first: the outcome before the details. */
  first?: readonly string[];
  /** Fields kept (the rest dropped). */
  pick?: readonly string[];
  /** Fields a summary adds, with their JSON types (declared in the output schema). */
  adds?: Record<string, 'integer' | 'object' | 'boolean' | 'string'>;
}

export interface Cut {
  path: string;
  kind: 'items' | 'characters';
  kept: number;
  total: number;
}

export interface Shaped {
  structured: Obj;
  /** How to read on, when anything was left out. */
  note?: string;
}

const renamed = (o: Obj, rename: Record<string, string> | undefined): Obj =>
  rename ? Object.fromEntries(Object.entries(o).map(([k, v]) => [rename[k] ?? k, v])) : o;

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

const size = (v: unknown) => JSON.stringify(v)?.length ?? 0;

interface Candidate {
  path: string;
  size: number;
  holder: Obj | unknown[];
  key: string | number;
}

/** Arrays of two items or more and strings over 100 characters, anywhere: what can shrink. */
function candidates(value: unknown, path: string, holder: Obj | unknown[] | undefined, key: string | number, out: Candidate[]) {
  if (typeof value === 'string') {
    if (value.length > 100 && holder) out.push({ path, size: value.length, holder, key });
    return;
  }
  if (Array.isArray(value)) {
    if (value.length >= 2 && holder) out.push({ path, size: size(value), holder, key });
    value.forEach((v, i) => candidates(v, `${path}[${i}]`, value, i, out));
    return;
  }
  if (isObj(value)) for (const [k, v] of Object.entries(value)) candidates(v, path ? `${path}.${k}` : k, value, k, out);
}

/**
 * Shrinks a result to at most `budget` characters of JSON: the largest array
 * loses items from its end, the longest text is cut; repeated until it fits.
 * Returns what was cut (the first cut of a path keeps its original total).
 */
export function fit(value: Obj, budget: number): { value: Obj; cuts: Cut[] } {
  const v = structuredClone(value);
  const cuts = new Map<string, Cut>();
  for (let round = 0; round < 1000; round++) {
    const total = size(v);
    if (total <= budget) break;
    const excess = total - budget;
    const found: Candidate[] = [];
    candidates(v, '', undefined, '', found);
    const biggest = found.sort((a, b) => b.size - a.size)[0];
    if (!biggest) break;
    const target = (biggest.holder as Obj)[biggest.key as string] as unknown;
    const path = biggest.path.replace(/\[\d+\]/g, (m) => m);
    if (Array.isArray(target)) {
      const before = cuts.get(path)?.total ?? target.length;
      let removed = 0;
      while (target.length > 1 && removed < excess) removed += size(target.pop()) + 1;
      cuts.set(path, { path, kind: 'items', kept: target.length, total: before });
    } else if (typeof target === 'string') {
      const before = cuts.get(path)?.total ?? target.length;
      const kept = Math.max(0, target.length - excess - 1);
      (biggest.holder as Obj)[biggest.key as string] = `${target.slice(0, kept)}…`;
      cuts.set(path, { path, kind: 'characters', kept, total: before });
    }
  }
  return { value: v, cuts: [...cuts.values()] };
}

export interface ShapeContext {
  args: Obj;
  /** X-Total-Count of a REST list. */
  totalCount?: number;
  /** The tool pages its list with offset. */
  takesOffset: boolean;
  toolName: string;
}

/** The REST answer shaped for an assistant (see the top of this file). */
export function shapeResult(body: Obj, shaping: Shaping | undefined, ctx: ShapeContext): Shaped {
  const s = shaping ?? {};
  const full = ctx.args.detail === 'full';
  let o = renamed(body, s.rename);
  if (s.pick) o = Object.fromEntries(s.pick.filter((k) => k in o).map((k) => [k, o[k]]));
  const start = typeof ctx.args.start_index === 'number' ? ctx.args.start_index : 0;
  if (s.pagedText && typeof o[s.pagedText] === 'string') {
    const text = o[s.pagedText] as string;
    const length = typeof ctx.args.max_length === 'number' ? ctx.args.max_length : TEXT_WINDOW;
    o = { ...o, [s.pagedText]: text.slice(start, start + length), [`${s.pagedText}_length`]: text.length };
    if (start + length < text.length) o.next_start_index = start + length;
  }
  if (!full && s.summarize) o = s.summarize(o);
  const offset = typeof ctx.args.offset === 'number' ? ctx.args.offset : 0;
  if (s.list && Array.isArray(o[s.list])) {
    const items = o[s.list] as unknown[];
    o[s.list] = items.map((item) => {
      const named = isObj(item) ? renamed(item, s.rename) : item;
      return !full && s.summarizeItem && isObj(named) ? s.summarizeItem(named) : named;
    });
    if (ctx.totalCount !== undefined) {
      o.total_count = ctx.totalCount;
      if (ctx.takesOffset && offset + items.length < ctx.totalCount) o.next_offset = offset + items.length;
    }
  }
  if (s.first) o = { ...Object.fromEntries(s.first.filter((k) => k in o).map((k) => [k, o[k]])), ...o };

  const { value, cuts } = fit(o, RESULT_CAP - 2 * NOTE_MAX);
  if (cuts.length === 0) return { structured: value };
  const parts = cuts.slice(0, 4).map((c) => `${c.path} holds ${c.kept} of ${c.total} ${c.kind}`);
  const hints: string[] = [];
  for (const c of cuts) {
    if (c.path === s.list && ctx.takesOffset && c.kind === 'items') {
      value.next_offset = offset + c.kept;
      hints.push(`call ${ctx.toolName} again with offset: ${offset + c.kept}`);
    } else if (c.path === s.pagedText && c.kind === 'characters') {
      value.next_start_index = start + c.kept;
      hints.push(`call ${ctx.toolName} again with start_index: ${start + c.kept}`);
    }
  }
  if (hints.length === 0)
    hints.push(
      `ask for less (a smaller limit or max_results${s.summarizeItem || s.summarize ? ", detail: 'summary'" : ''}) or read one item with its get tool`,
    );
  const note =
    `Cut to fit ${RESULT_CAP.toLocaleString('en')} characters: ${parts.join('; ')}. To read on, ${hints.slice(0, 2).join(', or ')}.`.slice(
      0,
      NOTE_MAX - 20,
    );
  return { structured: { ...value, truncated: note }, note };
}
