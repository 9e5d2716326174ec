import { contentStems } from '@kb/search';
import { refersBack } from './referents.js';

/**
 * The piece's description (a hosted page's subtitle and meta description): the
 * drafted sentence that best summarises it, not whichever comes first. A
 * candidate stands on its own (it does not refer back, is not a question), is of
 * a description's length, and is scored by how much of the piece's title it says
 * and how many of the words the piece keeps returning to it holds, an earlier
 * sentence winning a tie.
 */

const MAX_CHARS = 300;

export function describe(title: string, sentences: { text: string; verdict?: string }[]): string {
  const stems = sentences.map((s) => new Set(contentStems(s.text)));
  const frequency = new Map<string, number>();
  for (const set of stems) for (const t of set) frequency.set(t, (frequency.get(t) ?? 0) + 1);
  const titleStems = new Set(contentStems(title));
  let best: { text: string; score: number } | undefined;
  sentences.forEach((s, i) => {
    const words = s.text.split(/\s+/).length;
    if (s.verdict === 'unsupported' || s.verdict === 'contradicted') return;
    if (s.text.length > MAX_CHARS || words < 6 || /\?["'”’)]?$/.test(s.text) || refersBack(s.text)) return;
    const own = stems[i]!;
    const onTitle = titleStems.size ? [...titleStems].filter((t) => own.has(t)).length / titleStems.size : 0;
    // Words other sentences share: what the piece is about, not what one sentence adds.
    const central = own.size ? [...own].reduce((n, t) => n + Math.min(3, (frequency.get(t) ?? 1) - 1), 0) / (3 * own.size) : 0;
    const score = onTitle + central - 0.01 * i;
    if (!best || score > best.score) best = { text: s.text, score };
  });
  return best?.text ?? sentences.find((s) => s.text.length <= MAX_CHARS)?.text ?? sentences[0]?.text.slice(0, MAX_CHARS) ?? '';
}
