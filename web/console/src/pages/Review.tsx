import { useState } from 'preact/hooks';
import type { Api } from '../api';
import { useLoad } from '../hooks';
import { ErrorNote, Section, formatDate } from '../components/common';

interface QueueItem {
  piece_id: string;
  title: string;
  status: string;
  waiting_for: string;
  waiting_since: string;
  publishable: boolean;
}
interface PieceSummary {
  piece_id: string;
  title: string;
  status: string;
  revision: number;
}
interface Piece extends PieceSummary {
  verification: string;
  publishable: boolean;
  unsupported_sentences: { section_id: string; index: number; text: string; verdict: string }[];
  stale_sources: { content_id: string; reason: string }[];
  reviewer: string | null;
  review_comment: string | null;
  approved_revision: number | null;
  publications: {
    destination_id: string;
    type: string;
    status: string;
    url?: string | null;
    pending_revision?: number;
    error?: string;
  }[];
  history: { event: string; actor?: string; at: string; comment?: string; error?: string }[];
}
interface Destination {
  destination_id: string;
  name: string;
  type: string;
  enabled: boolean;
}
interface Outcome {
  window_days: number;
  prompts: { prompt_id: string; movement: string; before: Figures; after: Figures }[];
}
interface Figures {
  answer_count: number;
  mention_rate: number | null;
  citation_rate: number | null;
}

const pct = (v: number | null) => (v === null ? 'n/a' : `${Math.round(v * 100)}%`);

/** The review queue and each piece: the publish gate, approve, reject with a comment, publish to chosen destinations. */
export function Review({ api, pieceId }: { api: Api; pieceId?: string | undefined }) {
  const queue = useLoad(() => api.request<QueueItem[]>('GET', '/org/content/review-queue'), []);
  const pieces = useLoad(() => api.request<PieceSummary[]>('GET', '/org/content/pieces?limit=50'), []);
  return (
    <div class="stack">
      {pieceId && (
        <PieceView
          api={api}
          id={pieceId}
          onChange={() => {
            queue.reload();
            pieces.reload();
          }}
        />
      )}
      <Section title="Review queue">
        <ErrorNote error={queue.error} />
        {(queue.data ?? []).length === 0 ? (
          <p>Nothing waits for review.</p>
        ) : (
          <ul class="plain">
            {(queue.data ?? []).map((q) => (
              <li key={q.piece_id}>
                <a href={`#/review/${q.piece_id}`}>{q.title}</a> — {q.status.replace('_', ' ')}, waiting for {q.waiting_for} since{' '}
                {formatDate(q.waiting_since)}
                {!q.publishable && ' (does not pass the publish gate)'}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section title="Pieces">
        <ErrorNote error={pieces.error} />
        <ul class="plain">
          {(pieces.data ?? []).map((p) => (
            <li key={p.piece_id}>
              <a href={`#/review/${p.piece_id}`}>{p.title}</a> — {p.status.replace('_', ' ')}, revision {p.revision}
            </li>
          ))}
        </ul>
      </Section>
    </div>
  );
}

function PieceView({ api, id, onChange }: { api: Api; id: string; onChange: () => void }) {
  const piece = useLoad(() => api.request<Piece>('GET', `/org/content/pieces/${id}`), [id]);
  const destinations = useLoad(() => api.request<Destination[]>('GET', '/org/destinations'), []);
  const outcome = useLoad(
    () =>
      piece.data?.status === 'published' ? api.request<Outcome>('GET', `/org/content/pieces/${id}/outcome`) : Promise.resolve(undefined),
    [id, piece.data?.status],
  );
  const [error, setError] = useState<Error>();
  const [note, setNote] = useState<string>();
  const act = async (label: string, path: string, body: unknown) => {
    setError(undefined);
    setNote(undefined);
    try {
      await api.request('POST', `/org/content/pieces/${id}/${path}`, body);
      setNote(label);
      piece.reload();
      onChange();
    } catch (err) {
      setError(err as Error);
    }
  };
  const p = piece.data;
  return (
    <Section title={p ? `Piece: ${p.title}` : 'Piece'} actions={<a href={`#/generation/draft/${id}`}>Open the draft</a>}>
      <ErrorNote error={piece.error ?? error} />
      {note && <p role="status">{note}</p>}
      {p && (
        <>
          <p>
            Status <strong>{p.status.replace('_', ' ')}</strong>, revision {p.revision},{' '}
            {p.publishable ? 'passes the publish gate.' : 'does not pass the publish gate.'}
            {p.review_comment && ` Reviewer's comment: “${p.review_comment}”.`}
          </p>
          {p.unsupported_sentences.length > 0 && (
            <div class="warning" role="note">
              <p>These sentences are not supported by a source:</p>
              <ul>
                {p.unsupported_sentences.map((s) => (
                  <li key={`${s.section_id}:${s.index}`}>
                    {s.text} <em>({s.verdict})</em>
                  </li>
                ))}
              </ul>
            </div>
          )}
          {p.stale_sources.length > 0 && (
            <p class="warning" role="note">
              {p.stale_sources.length} cited source(s) changed since this revision.
            </p>
          )}
          <div class="actions">
            {p.status !== 'in_review' && p.approved_revision !== p.revision && (
              <button type="button" onClick={() => void act('Submitted for review.', 'submit', {})}>
                Submit for review
              </button>
            )}
            {p.status === 'in_review' && (
              <button type="button" onClick={() => void act('Approved.', 'approve', {})}>
                Approve
              </button>
            )}
          </div>
          {p.status === 'in_review' && (
            <form
              class="inline"
              onSubmit={(e) => {
                e.preventDefault();
                const comment = String(new FormData(e.currentTarget as HTMLFormElement).get('comment') ?? '').trim();
                void act('Rejected.', 'reject', { comment });
              }}
            >
              <label class="grow">
                Comment
                <input name="comment" required maxLength={2000} />
              </label>
              <button type="submit">Reject</button>
            </form>
          )}
          {p.approved_revision === p.revision && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                const chosen = new FormData(e.currentTarget as HTMLFormElement).getAll('destination_ids').map(String);
                void act('Published.', 'publish', chosen.length > 0 ? { destination_ids: chosen } : {});
              }}
            >
              <fieldset>
                <legend>Publish to (none chosen: the default set)</legend>
                {(destinations.data ?? [])
                  .filter((d) => d.enabled)
                  .map((d) => (
                    <label key={d.destination_id} class="check">
                      <input type="checkbox" name="destination_ids" value={d.destination_id} /> {d.name} ({d.type})
                    </label>
                  ))}
              </fieldset>
              <button type="submit">Publish</button>
            </form>
          )}
          {p.publications.some((x) => x.status === 'live') && (
            <div class="actions">
              <button type="button" onClick={() => void act('Unpublished.', 'unpublish', {})}>
                Unpublish
              </button>
            </div>
          )}
          {p.publications.length > 0 && (
            <>
              <h3>Publications</h3>
              <ul class="plain">
                {p.publications.map((x) => (
                  <li key={x.destination_id}>
                    {x.type}: {x.status}
                    {x.pending_revision !== undefined && ` (revision ${x.pending_revision} on its way)`}{' '}
                    {x.url && <a href={x.url}>{x.url}</a>}
                    {x.error && <span class="warning"> {x.error}</span>}
                  </li>
                ))}
              </ul>
            </>
          )}
          {outcome.data && outcome.data.prompts.length > 0 && (
            <>
              <h3>Target prompts before and after publication ({outcome.data.window_days} days each)</h3>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Prompt</th>
                    <th scope="col">Mention rate before → after</th>
                    <th scope="col">Citation rate before → after</th>
                    <th scope="col">Movement</th>
                  </tr>
                </thead>
                <tbody>
                  {outcome.data.prompts.map((o) => (
                    <tr key={o.prompt_id}>
                      <td>{o.prompt_id.slice(0, 8)}</td>
                      <td>
                        {pct(o.before.mention_rate)} → {pct(o.after.mention_rate)}
                      </td>
                      <td>
                        {pct(o.before.citation_rate)} → {pct(o.after.citation_rate)}
                      </td>
                      <td>{o.movement}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          <h3>History</h3>
          <ol class="plain">
            {p.history.map((h, i) => (
              <li key={i}>
                {formatDate(h.at)} {h.event.replace('_', ' ')}
                {h.actor ? ` by ${h.actor}` : ''}
                {h.comment ? `: “${h.comment}”` : ''}
                {h.error ? `: ${h.error}` : ''}
              </li>
            ))}
          </ol>
        </>
      )}
    </Section>
  );
}
