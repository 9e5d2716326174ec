import { useState } from 'preact/hooks';
import type { Api } from '../api';
import { ErrorNote, Section } from '../components/common';
import type { SearchAnswer, SearchChunk } from '../types';

/** Splits an answer into text and [n] citation markers. */
export function answerParts(answer: string): Array<string | number> {
  return answer.split(/(\[\d+\])/).flatMap((part): Array<string | number> => {
    const m = /^\[(\d+)\]$/.exec(part);
    return m ? [Number(m[1])] : part ? [part] : [];
  });
}

/** Ask the knowledge base; every [n] in the answer opens the chunk it cites. */
export function Search({ api }: { api: Api }) {
  const [result, setResult] = useState<SearchAnswer>();
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState<number>();
  const ask = async (e: Event) => {
    e.preventDefault();
    const query = String(new FormData(e.currentTarget as HTMLFormElement).get('query') ?? '').trim();
    if (!query) return;
    setBusy(true);
    setError(undefined);
    setOpen(undefined);
    try {
      setResult(await api.request<SearchAnswer>('POST', '/org/search', { query, max_results: 10 }));
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const cited: SearchChunk | undefined = open !== undefined ? result?.context[open - 1] : undefined;
  return (
    <div class="stack">
      <Section title="Ask the knowledge base">
        <form class="inline" onSubmit={ask} role="search">
          <label class="grow">
            Question
            <input name="query" required maxLength={2000} placeholder="What does the pricing page say about discounts?" />
          </label>
          <button type="submit" disabled={busy}>
            {busy ? 'Searching…' : 'Ask'}
          </button>
        </form>
        <ErrorNote error={error} />
      </Section>
      {result && (
        <Section title="Answer">
          <p class="answer" aria-live="polite">
            {answerParts(result.answer).map((part, i) =>
              typeof part === 'number' ? (
                <button
                  type="button"
                  key={i}
                  class="cite"
                  aria-label={`Source ${part}: ${result.context[part - 1]?.title ?? ''}`}
                  aria-expanded={open === part}
                  onClick={() => setOpen(open === part ? undefined : part)}
                >
                  [{part}]
                </button>
              ) : (
                <span key={i}>{part}</span>
              ),
            )}
          </p>
          <p class="muted">
            {result.total_results} matching passages · {result.processing_time_ms} ms
          </p>
          {cited && (
            <blockquote class="cited" aria-label={`Cited passage ${open}`}>
              <p>
                <strong>{cited.title}</strong> · passage #{cited.chunk_index}{' '}
                <a href={`#/kb/content/${cited.content_id}`}>open the document</a>
              </p>
              <p>{highlight(cited.chunk_text, result.answer)}</p>
            </blockquote>
          )}
          <h3>Passages</h3>
          <ol class="chunks">
            {result.context.map((c, i) => (
              <li key={`${c.version_id}:${c.chunk_index}`}>
                <button type="button" class="link" onClick={() => setOpen(i + 1)}>
                  [{i + 1}] {c.title}
                </button>
                <p>{c.chunk_text.length > 300 ? `${c.chunk_text.slice(0, 300)}…` : c.chunk_text}</p>
              </li>
            ))}
          </ol>
        </Section>
      )}
    </div>
  );
}

/** Marks the sentences of a chunk that the answer quotes. */
function highlight(text: string, answer: string) {
  const quoted = new Set(
    answer
      .replace(/\[\d+\]/g, '')
      .split(/(?<=[.!?])\s+/)
      .map((s) => s.trim())
      .filter((s) => s.length > 20),
  );
  return text.split(/(?<=[.!?])\s+/).map((s, i) => (quoted.has(s.trim()) ? <mark key={i}>{s} </mark> : <span key={i}>{s} </span>));
}
