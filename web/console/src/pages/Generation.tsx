import { useId, useState } from 'preact/hooks';
import { ApiError, type Api } from '../api';
import { useInterval, useLoad, type Loaded } from '../hooks';
import { ErrorNote, Section, formatDate } from '../components/common';
import { SchemaEditor, readSchemaForm, type Components, type JsonSchema } from '../components/SchemaForm';
import type { ContentItem } from '../types';

interface OpenApi {
  components: { schemas: Components };
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
}
interface ContentType {
  content_type_id: string;
  name: string;
  description?: string;
  config: {
    kind?: string;
    format?: string;
    sections?: { title: string; instructions?: string }[];
    target_length?: { min_words?: number; max_words?: number };
    auto_publish?: boolean;
    [key: string]: unknown;
  };
}
interface Run {
  run_id: string;
  content_type_id: string;
  state: string;
  progress: number;
  reason?: string | null;
  draft_id: string | null;
  created_at: string;
}
/** Where a sentence's verdict comes from: a chunk of a source and the span of it, verbatim. */
interface Citation {
  content_id: string;
  version_id?: string;
  chunk_id: string;
  quote: string;
  score?: number;
}
interface Sentence {
  index: number;
  text: string;
  verdict: 'supported' | 'unsupported' | 'contradicted' | 'not_factual';
  citations: Citation[];
  /** Why the sentence is not supported, when the API says. */
  reason?: string;
}
interface Draft {
  draft_id: string;
  revision: number;
  title: string;
  verification: string;
  sections: { section_id: string; title: string; sentences: Sentence[] }[];
  stale_sources: { content_id: string; reason: string }[];
  totals?: Record<string, number>;
}

/** The request body schema the API publishes for `method path`. */
export const bodySchema = (doc: OpenApi | undefined, path: string, method: string): JsonSchema | undefined =>
  doc?.paths[`/api/v1${path}`]?.[method]?.requestBody?.content['application/json']?.schema;

const verdictText: Record<Sentence['verdict'], string> = {
  supported: 'supported',
  unsupported: 'unsupported',
  contradicted: 'contradicted',
  not_factual: 'not a factual claim',
};

const ACTIVE = new Set(['queued', 'retrieving', 'drafting', 'verifying']);

/**
 * Runs first (start one, follow its progress, open its draft), then content types and the
 * brand kit as forms from the API's closed key sets (each with a JSON view), then verified drafts.
 */
export function Generation({ api, draftId }: { api: Api; draftId?: string | undefined }) {
  const doc = useLoad(() => api.request<OpenApi>('GET', '/openapi.json'), []);
  const types = useLoad(() => api.request<ContentType[]>('GET', '/org/content-types?limit=100'), []);
  if (draftId) return <DraftView api={api} id={draftId} />;
  const components = doc.data?.components.schemas ?? {};
  return (
    <div class="stack">
      <ErrorNote error={doc.error} />
      <Runs api={api} types={types.data ?? []} />
      {doc.data && (
        <ContentTypes api={api} types={types} components={components} schema={bodySchema(doc.data, '/org/content-types', 'post')} />
      )}
      {doc.data && <BrandKit api={api} components={components} />}
    </div>
  );
}

function BrandKit({ api, components }: { api: Api; components: Components }) {
  const kit = useLoad(
    () =>
      api
        .request<{ name: string; guidelines: Record<string, unknown> }>('GET', '/org/brand-kit')
        .catch((e: ApiError) => (e.status === 404 ? undefined : Promise.reject(e))),
    [],
  );
  const [note, setNote] = useState<string>();
  const [error, setError] = useState<Error>();
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const form = e.currentTarget as HTMLFormElement;
    try {
      const guidelines = readSchemaForm(form, 'g.');
      const name = String(new FormData(form).get('name') ?? '').trim();
      await api.request('PUT', '/org/brand-kit', { ...(name && { name }), guidelines });
      setNote('Brand kit saved.');
      kit.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const nameId = useId();
  return (
    <Section title="Brand kit">
      <ErrorNote error={kit.error ?? error} />
      {!kit.loading && (
        <form onSubmit={(e) => void save(e)} key={kit.data ? 'kit' : 'none'}>
          <div class="field">
            <label for={nameId}>Name</label>
            <input id={nameId} name="name" maxLength={200} value={kit.data?.name ?? ''} />
          </div>
          <SchemaEditor
            schema={{ $ref: 'BrandKitGuidelines' }}
            components={components}
            value={kit.data?.guidelines}
            prefix="g."
            label="Guidelines"
          />
          <button type="submit">Save brand kit</button>
          {note && <p role="status">{note}</p>}
        </form>
      )}
    </Section>
  );
}

/** A content type in a line: its sections, kind, format, length and whether it publishes itself. */
export function describeContentType(config: ContentType['config']): string {
  const parts = [
    config.sections && config.sections.length > 0
      ? `Sections: ${config.sections.map((x) => x.title).join(', ')}`
      : 'One "Overview" section',
    config.kind ?? 'article',
    config.format ?? 'markdown',
    config.target_length ? `${config.target_length.min_words ?? 0} to ${config.target_length.max_words ?? 600} words` : undefined,
    config.auto_publish ? 'publishes when verified' : 'goes to review',
  ];
  return parts.filter(Boolean).join(' · ');
}

function ContentTypes({
  api,
  types,
  components,
  schema,
}: {
  api: Api;
  types: Loaded<ContentType[]>;
  components: Components;
  schema: JsonSchema | undefined;
}) {
  const [error, setError] = useState<Error>();
  const [editing, setEditing] = useState<ContentType | 'new'>();
  const configSchema = schema?.properties?.config;
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const form = e.currentTarget as HTMLFormElement;
    try {
      const config = readSchemaForm(form, 'c.');
      const body = { name: String(new FormData(form).get('name')).trim(), config };
      if (editing && editing !== 'new') await api.request('PUT', `/org/content-types/${editing.content_type_id}`, body);
      else await api.request('POST', '/org/content-types', body);
      setEditing(undefined);
      types.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <Section
      title="Content types"
      actions={
        configSchema && editing === undefined ? (
          <button type="button" onClick={() => setEditing('new')}>
            New content type
          </button>
        ) : undefined
      }
    >
      <ErrorNote error={types.error ?? error} />
      {(types.data ?? []).length === 0 && !types.loading && <p class="muted">No content type yet: create one to start a run.</p>}
      <ul class="content-types">
        {(types.data ?? []).map((t) => (
          <li key={t.content_type_id} class="content-type">
            <div class="card-head">
              <strong>{t.name}</strong>
              {editing === undefined && (
                <button type="button" class="secondary" onClick={() => setEditing(t)} aria-label={`Edit ${t.name}`}>
                  Edit
                </button>
              )}
            </div>
            <p class="muted">{describeContentType(t.config)}</p>
            <details>
              <summary>JSON</summary>
              <pre class="json">{JSON.stringify(t.config, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ul>
      {configSchema && editing !== undefined && (
        <form onSubmit={(e) => void save(e)} key={editing === 'new' ? 'new' : editing.content_type_id}>
          <h3>{editing === 'new' ? 'New content type' : `Edit ${editing.name}`}</h3>
          <div class="field">
            <label for="ct-name">Name</label>
            <input id="ct-name" name="name" required minLength={1} maxLength={200} value={editing === 'new' ? '' : editing.name} />
          </div>
          <SchemaEditor
            schema={configSchema}
            components={components}
            value={editing === 'new' ? undefined : editing.config}
            prefix="c."
            label="Configuration"
          />
          <div class="actions">
            <button type="submit">{editing === 'new' ? 'Create content type' : 'Save content type'}</button>
            <button type="button" class="secondary" onClick={() => setEditing(undefined)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Section>
  );
}

/** Start a run of a content type and follow the recent runs live; each finished run opens its draft. */
function Runs({ api, types }: { api: Api; types: ContentType[] }) {
  const runs = useLoad(() => api.request<Run[]>('GET', '/org/generation/runs?limit=10'), []);
  const [error, setError] = useState<Error>();
  const active = (runs.data ?? []).some((r) => ACTIVE.has(r.state));
  useInterval(() => runs.reload(), 1500, active);
  const start = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const data = new FormData(e.currentTarget as HTMLFormElement);
    const instructions = String(data.get('instructions') ?? '').trim();
    try {
      await api.request('POST', '/org/generation/runs', {
        content_type_id: String(data.get('content_type_id')),
        ...(instructions && { instructions }),
      });
      runs.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const nameOf = (id: string) => types.find((t) => t.content_type_id === id)?.name ?? id.slice(0, 8);
  return (
    <Section title="Generation runs">
      <ErrorNote error={runs.error ?? error} />
      {types.length > 0 ? (
        <form class="inline" onSubmit={(e) => void start(e)}>
          <label>
            Content type
            <select name="content_type_id" required>
              {types.map((t) => (
                <option key={t.content_type_id} value={t.content_type_id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
          <label class="grow">
            Instructions
            <input name="instructions" maxLength={4000} />
          </label>
          <button type="submit">Start run</button>
        </form>
      ) : (
        <p class="muted">Create a content type (below) to start a run.</p>
      )}
      <div class="table-scroll">
        <table>
          <caption class="visually-hidden">Recent runs</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Content type</th>
              <th scope="col">State</th>
              <th scope="col">Progress</th>
              <th scope="col">Draft</th>
            </tr>
          </thead>
          <tbody>
            {(runs.data ?? []).map((r) => (
              <tr key={r.run_id}>
                <td>{formatDate(r.created_at)}</td>
                <td>{nameOf(r.content_type_id)}</td>
                <td>
                  {r.state}
                  {r.reason ? `: ${r.reason}` : ''}
                </td>
                <td>
                  <progress max={1} value={r.progress} aria-label={`Run ${Math.round(r.progress * 100)}% done`} />
                </td>
                <td>{r.draft_id ? <a href={`#/generation/draft/${r.draft_id}`}>Open draft</a> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Section>
  );
}

/** Words only, lower case: enough to tell a sentence that repeats its source from one that paraphrases it. */
const words = (s: string) =>
  s
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** A supported sentence whose cited spans it does not repeat: the source says it in other words. */
export function isParaphrase(sentence: Pick<Sentence, 'text' | 'verdict' | 'citations'>): boolean {
  if (sentence.verdict !== 'supported' || sentence.citations.length === 0) return false;
  const text = words(sentence.text);
  return !sentence.citations.some((c) => {
    const quote = words(c.quote);
    return quote.length > 0 && (text.includes(quote) || quote.includes(text));
  });
}

const defaultReason: Partial<Record<Sentence['verdict'], string>> = {
  contradicted: 'The source says otherwise.',
  unsupported: 'No source in the knowledge base states this.',
};

/** How a sentence's cited span is introduced, by verdict. */
const spanLabel: Record<Sentence['verdict'], string> = {
  supported: 'Source says:',
  contradicted: 'Source says:',
  unsupported: 'Closest source:',
  not_factual: 'Source:',
};

/** The sources cited in a draft, by content id, with their titles where the knowledge base gives them. */
function useSourceTitles(api: Api, draft: Draft | undefined): Map<string, string> {
  const ids = [...new Set((draft?.sections ?? []).flatMap((s) => s.sentences.flatMap((x) => x.citations.map((c) => c.content_id))))].slice(
    0,
    50,
  );
  const titles = useLoad(
    () =>
      Promise.all(
        ids.map((id) =>
          api.request<ContentItem>('GET', `/org/kb/content/${id}`).then(
            (item) => [id, item.title] as const,
            () => [id, ''] as const,
          ),
        ),
      ).then((pairs) => new Map(pairs.filter(([, title]) => title))),
    [ids.join(',')],
  );
  return titles.data ?? new Map<string, string>();
}

/**
 * A draft with every sentence marked by its verdict (colour and words) and, in a
 * visible line under it, the span of the source that backs the verdict (its own
 * words, which matter most when the sentence paraphrases it) and, for a sentence
 * that is not supported, why and the closest span when there is one.
 */
export function DraftView({ api, id }: { api: Api; id: string }) {
  const draft = useLoad(() => api.request<Draft>('GET', `/org/generation/drafts/${id}`), [id]);
  const d = draft.data;
  const titles = useSourceTitles(api, d);
  return (
    <Section title={d ? `Draft: ${d.title}` : 'Draft'} actions={<a href="#/generation">Back to generation</a>}>
      <ErrorNote error={draft.error} />
      {d && (
        <>
          <p>
            Revision {d.revision}, <span class={`badge verification-${d.verification}`}>{d.verification.replace('_', ' ')}</span>{' '}
            <a href={`#/review/${d.draft_id}`}>Review this piece</a>
          </p>
          {d.stale_sources.length > 0 && (
            <p class="warning" role="note">
              {d.stale_sources.length} cited source(s) changed since this draft:{' '}
              {d.stale_sources.map((s) => `${s.content_id.slice(0, 8)} (${s.reason.replace('_', ' ')})`).join(', ')}
            </p>
          )}
          <ul class="legend" aria-label="Verdicts">
            {Object.entries(verdictText).map(([v, text]) => (
              <li key={v} class={`sentence v-${v}`}>
                {text}
              </li>
            ))}
          </ul>
          {d.sections.map((s) => (
            <article key={s.section_id} class="draft-section">
              <h3>{s.title}</h3>
              <ol class="draft-sentences">
                {s.sentences.map((sentence) => (
                  <SentenceView key={sentence.index} sentence={sentence} titles={titles} />
                ))}
              </ol>
            </article>
          ))}
        </>
      )}
    </Section>
  );
}

function SentenceView({ sentence, titles }: { sentence: Sentence; titles: Map<string, string> }) {
  const id = useId();
  const paraphrase = isParaphrase(sentence);
  const reason = sentence.reason ?? defaultReason[sentence.verdict];
  const spans = sentence.citations;
  const hasEvidence = reason !== undefined || spans.length > 0 || sentence.verdict === 'supported';
  return (
    <li>
      <span class={`sentence v-${sentence.verdict}`} aria-describedby={hasEvidence ? id : undefined}>
        {sentence.text}{' '}
        <span class="verdict">
          [{verdictText[sentence.verdict]}
          {paraphrase ? ', in other words' : ''}]
        </span>
      </span>
      {hasEvidence && (
        <div class="evidence" id={id}>
          {reason !== undefined && (
            <p class="reason">
              <strong>Why:</strong> {reason}
            </p>
          )}
          {spans.map((c, i) => (
            <p key={`${c.chunk_id}#${i}`} class="source-span">
              <strong>{spanLabel[sentence.verdict]}</strong> <span class="quote">“{c.quote}”</span> —{' '}
              <a href={`#/kb/content/${c.content_id}`}>{titles.get(c.content_id) ?? `content ${c.content_id.slice(0, 8)}`}</a>, chunk{' '}
              {c.chunk_id.split(':').at(-1)}
            </p>
          ))}
          {sentence.verdict === 'supported' && spans.length === 0 && <p class="muted">No source cited.</p>}
        </div>
      )}
    </li>
  );
}
