import type { AnswerCollected } from '@kb/events';
import type { AnswerFacts } from '../domain/facts.js';
import { normalizeUrl } from '../domain/urls.js';
import { ANSWER_BODIES, LATEST_ANSWERS, type LatestAnswerDoc } from './collections.js';
import type { RowStore } from './write-batch.js';

type LatestKey = Pick<AnswerCollected, 'org_id' | 'prompt_id' | 'model' | 'location'>;
const latestId = (a: LatestKey) => JSON.stringify([a.org_id, a.prompt_id, a.model, a.location]);

/** Newer wins; equal run_at: the greater answer id, so the outcome never depends on arrival order. */
const isNewer = (a: { run_at: string; answer_id: string }, b: { run_at: string; answer_id: string }) => {
  const ta = Date.parse(a.run_at);
  const tb = Date.parse(b.run_at);
  return ta > tb || (ta === tb && a.answer_id > b.answer_id);
};

/**
 * Rule 6: text, citations and mentions only for the latest answer per prompt,
 * model and location. An answer newer than the latest becomes it (the body it
 * supersedes is deleted); an older one is counted, never shown, and its body is
 * deleted. Run on the transaction, or on the fold thread's overlay for the
 * answers handed to it, in the order they are appended.
 */
export async function foldLatest(
  rows: RowStore,
  answer: LatestKey & Pick<AnswerCollected, 'answer_id' | 'run_at' | 'origin'>,
  facts: AnswerFacts,
  names: ReadonlyMap<string, string>,
  body: { text: string; citations: readonly string[] } | undefined,
): Promise<void> {
  const lid = latestId(answer);
  const current = await rows.get<LatestAnswerDoc>(LATEST_ANSWERS, lid);
  if (!current || isNewer(answer, current)) {
    const citations: LatestAnswerDoc['citations'] = [];
    if (body) {
      for (const raw of body.citations) {
        const n = normalizeUrl(raw);
        const fact = n && facts.citations.find((c) => c.page === n.key);
        if (n && fact) citations.push({ url: raw, normalized_url: n.key, domain: n.host, tier: fact.tier });
      }
    } else {
      for (const c of facts.citations) citations.push({ url: c.page, normalized_url: c.page, domain: c.domain, tier: c.tier });
    }
    const doc: LatestAnswerDoc = {
      id: lid,
      answer_id: answer.answer_id,
      org_id: answer.org_id,
      prompt_id: answer.prompt_id,
      model: answer.model,
      location: answer.location,
      run_at: answer.run_at,
      text: body?.text ?? '',
      citations,
      mentions: Object.entries(facts.tracked_mentions).map(([key, count]) => ({
        brand_id: key === 'org' ? null : key,
        name: names.get(key) ?? key,
        is_organization: key === 'org',
        count,
      })),
      other_brand_mention_count: facts.other_mentions.reduce((s, o) => s + o.count, 0),
      won: facts.won,
      lost: facts.lost,
      origin: answer.origin,
    };
    await rows.put(LATEST_ANSWERS, doc);
    // The answer it supersedes keeps no text anywhere (its counts stay in the rows).
    if (current && current.answer_id !== answer.answer_id) await rows.delete(ANSWER_BODIES, current.answer_id);
  } else if (current.answer_id !== answer.answer_id) {
    await rows.delete(ANSWER_BODIES, answer.answer_id);
  }
}
