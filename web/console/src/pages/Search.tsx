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

/** The sentences of an answer long enough to be worth finding in a source (citation markers left out). */
function quotedSentences(answer: string): string[] {
  return answer
    .replace(/\[\d+\]/g, '')
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 20);
}

/**
 * The parts of a chunk, each marked when the answer quotes it. A quoted sentence is found
 * wherever it is in the chunk, whatever comes before it (a heading, a list marker) and
 * however the whitespace runs.
 */
export function highlightParts(text: string, answer: string): { text: string; quoted: boolean }[] {
  const ranges: [number, number][] = [];
  for (const sentence of quotedSentences(answer)) {
    const pattern = new RegExp(
      sentence
        .split(/\s+/)
        .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('\\s+'),
      'g',
    );
    for (const m of text.matchAll(pattern)) ranges.push([m.index, m.index + m[0].length]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const parts: { text: string; quoted: boolean }[] = [];
  let at = 0;
  for (const [start, end] of ranges) {
    if (end <= at) continue;
    if (start > at) parts.push({ text: text.slice(at, start), quoted: false });
    parts.push({ text: text.slice(Math.max(start, at), end), quoted: true });
    at = end;
  }
  if (at < text.length) parts.push({ text: text.slice(at), quoted: false });
  return parts;
}

/** Marks the sentences of a chunk that the answer quotes. */
function highlight(text: string, answer: string) {
  return highlightParts(text, answer).map((p, i) => (p.quoted ? <mark key={i}>{p.text}</mark> : <span key={i}>{p.text}</span>));
}
