import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Api } from '../api';
import { useLoad } from '../hooks';
import { ErrorNote, formatDate, RatioView, Section } from '../components/common';
import { LineChart } from '../components/LineChart';
import type { Envelope, Ratio, Totals } from '../types';

type Tier = 'primary' | 'tracked' | 'secondary';
interface Overview extends Envelope {
  metrics: Record<string, Ratio>;
}
interface Day {
  day: string;
  answer_count: number;
  cited_run_count: number;
  mention_total: number;
  brand_mention_total: number;
  cited_answer_rate: Ratio;
  share_of_voice: Ratio;
  owned_citation_rate: Ratio;
}
interface Citations extends Envelope {
  tiers: { tier: Tier; label: string; answers_citing: number; citations: number; citation_rate: Ratio; citation_share: Ratio }[];
}
interface SourceRow {
  answers_citing: number;
  citations: number;
  coverage: Ratio;
  share: Ratio;
}
interface PromptRow {
  prompt_id: string;
  name: string;
  answer_count: number;
  won_count: number;
  lost_count: number;
  win_rate: Ratio;
  outcome: string;
}
interface LatestAnswer {
  answer_id: string;
  prompt_id: string;
  model: string;
  location: string;
  run_at: string;
  text: string;
  citations: { url: string; domain: string; tier: Tier }[];
  won: boolean;
  lost: boolean;
}

const tierLabel: Record<Tier, string> = { primary: 'Owned', tracked: 'Tracked', secondary: 'External' };
const iso = (d: Date) => d.toISOString().slice(0, 10);

export interface Filters {
  from: string;
  to: string;
  prompt_id: string;
  tag_id: string;
  model: string;
  location: string;
}

/** The longest window the API reports on (days). */
const MAX_WINDOW_DAYS = 731;

/**
 * Where the data is when the last 30 days hold none: the 30 days up to the latest answer of
 * the last two years (the longest window the API takes), or nothing when there is none.
 */
export async function windowWithData(api: Api, now: Date): Promise<{ from: string; to: string; latest: string } | undefined> {
  const from = iso(new Date(now.getTime() - (MAX_WINDOW_DAYS - 1) * 86_400_000));
  const found = await api.request<{ answers: { run_at: string }[] }>(
    'GET',
    `/org/analytics/answers/latest?${queryOf({ from, to: iso(now), prompt_id: '', tag_id: '', model: '', location: '' }, { limit: '1' })}`,
  );
  const latest = found.answers[0]?.run_at;
  if (!latest) return undefined;
  const day = new Date(`${latest.slice(0, 10)}T00:00:00Z`);
  return { from: iso(new Date(day.getTime() - 29 * 86_400_000)), to: iso(day), latest: latest.slice(0, 10) };
}

export function queryOf(f: Filters, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, ...extra })) if (v) q.set(k, v);
  return q.toString();
}

/** Mention, citation and share-of-voice figures over a window, with every ratio's counts on hover. */
export function Analytics({ api, now = new Date() }: { api: Api; now?: Date }) {
  const [filters, setFilters] = useState<Filters>({
    from: iso(new Date(now.getTime() - 29 * 86_400_000)),
    to: iso(now),
    prompt_id: '',
    tag_id: '',
    model: '',
    location: '',
  });
  const q = queryOf(filters);
  // Opened on the last 30 days; when they hold no answer, the window moves to where the data is, and says so.
  const [moved, setMoved] = useState<{ latest?: string; checked: boolean }>({ checked: false });
  const prompts = useLoad(() => api.list<{ prompt_id: string; name: string }>('/org/prompts?limit=100'), []);
  const tags = useLoad(() => api.list<{ tag_id: string; name: string }>('/org/tags?limit=100'), []);
  const overview = useLoad(() => api.request<Overview>('GET', `/org/analytics/overview?${q}`), [q]);
  const series = useLoad(() => api.request<Envelope & { days: Day[] }>('GET', `/org/analytics/timeseries?${q}`), [q]);
  const tiers = useLoad(() => api.request<Citations>('GET', `/org/analytics/citations?${q}`), [q]);
  const domains = useLoad(
    () =>
      api.request<Envelope & { domains: (SourceRow & { domain: string })[] }>(
        'GET',
        `/org/analytics/domains?${queryOf(filters, { limit: '10' })}`,
      ),
    [q],
  );
  const pages = useLoad(
    () =>
      api.request<Envelope & { pages: (SourceRow & { url: string; normalized_url?: string })[] }>(
        'GET',
        `/org/analytics/pages?${queryOf(filters, { limit: '10' })}`,
      ),
    [q],
  );
  const won = useLoad(
    () =>
      api.request<Envelope & { prompts: PromptRow[]; prompts_won: number; prompts_lost: number }>(
        'GET',
        `/org/analytics/prompts?${queryOf(filters, { limit: '20' })}`,
      ),
    [q],
  );
  const latest = useLoad(
    () =>
      api.request<Envelope & { answers: LatestAnswer[]; total_count: number }>(
        'GET',
        `/org/analytics/answers/latest?${queryOf(filters, { limit: '10' })}`,
      ),
    [q],
  );

  useEffect(() => {
    if (moved.checked || !overview.data) return;
    setMoved({ checked: true });
    if (overview.data.totals.answer_count > 0) return;
    void windowWithData(api, now).then(
      (found) => {
        setMoved({ checked: true, ...(found && { latest: found.latest }) });
        if (found) setFilters((f) => ({ ...f, from: found.from, to: found.to }));
      },
      () => undefined,
    );
  }, [overview.data]);

  const chart = useMemo(() => {
    const days = series.data?.days ?? [];
    return {
      days: days.map((d) => d.day),
      series: [
        { label: 'Citation rate', color: '#1f5fbf', values: days.map((d) => d.cited_answer_rate.value) },
        { label: 'Share of voice', color: '#b8481b', values: days.map((d) => d.share_of_voice.value) },
        { label: 'Owned citation rate', color: '#2a7a3b', values: days.map((d) => d.owned_citation_rate.value) },
      ],
    };
  }, [series.data]);

  const set = (key: keyof Filters) => (e: Event) => setFilters({ ...filters, [key]: (e.target as HTMLInputElement).value });
  const t: Totals | undefined = overview.data?.totals;
  const m = overview.data?.metrics;
  // Prompts the window's answers name that no tracked prompt is (imported answers may carry any prompt id).
  const untracked = [...new Set((latest.data?.answers ?? []).map((a) => a.prompt_id))].filter(
    (id) => !prompts.data?.items.some((p) => p.prompt_id === id),
  );
  const nameOf = (id: string) => prompts.data?.items.find((p) => p.prompt_id === id)?.name ?? id.slice(0, 8);

  return (
    <div class="stack">
      <Section title="Window and filters">
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <label>
            From
            <input type="date" value={filters.from} max={filters.to} onChange={set('from')} />
          </label>
          <label>
            To
            <input type="date" value={filters.to} min={filters.from} onChange={set('to')} />
          </label>
          <label>
            Prompt
            <select value={filters.prompt_id} onChange={set('prompt_id')}>
              <option value="">All prompts</option>
              {(prompts.data?.items ?? []).map((p) => (
                <option key={p.prompt_id} value={p.prompt_id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Tag
            <select value={filters.tag_id} onChange={set('tag_id')}>
              <option value="">All tags</option>
              {(tags.data?.items ?? []).map((tg) => (
                <option key={tg.tag_id} value={tg.tag_id}>
                  {tg.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Model
            <input value={filters.model} onChange={set('model')} placeholder="any" />
          </label>
          <label>
            Location
            <input value={filters.location} onChange={set('location')} placeholder="any" />
          </label>
        </form>
        <ErrorNote error={overview.error} />
        {moved.latest && (
          <p class="muted" role="status">
            The last 30 days hold no answers: showing the 30 days up to the latest answer ({moved.latest}).
          </p>
        )}
        {moved.checked && !moved.latest && t?.answer_count === 0 && (
          <p class="muted" role="status">
            No answers in this window. Answers come from imports (POST /api/v1/org/analytics/answers/import) and tracked prompt runs; pick
            the window they fall in.
          </p>
        )}
      </Section>
      {t && m && (
        <Section title="Overview">
          <dl class="metrics">
            <div>
              <dt>Answers</dt>
              <dd>{t.answer_count.toLocaleString()}</dd>
            </div>
            <div>
              <dt>Mention rate</dt>
              <dd>
                <RatioView ratio={m.mention_rate!} num={t.mentioned_run_count ?? 0} den={t.answer_count} label="answers" />
              </dd>
            </div>
            <div>
              <dt>Citation rate</dt>
              <dd>
                <RatioView ratio={m.cited_answer_rate!} num={t.cited_run_count} den={t.answer_count} label="answers" />
              </dd>
            </div>
            <div>
              <dt>Share of voice</dt>
              <dd>
                <RatioView ratio={m.share_of_voice!} num={t.mention_total} den={t.brand_mention_total} label="brand mentions" />
              </dd>
            </div>
            <div>
              <dt>Owned citation rate</dt>
              <dd>
                <RatioView ratio={m.owned_citation_rate!} num={t.tier_runs.primary} den={t.cited_run_count} label="cited answers (D)" />
              </dd>
            </div>
            <div>
              <dt>Win rate</dt>
              <dd>
                <RatioView ratio={m.win_rate!} num={t.won_count} den={t.answer_count} label="answers" />
              </dd>
            </div>
          </dl>
          {overview.data!.data_quality !== 'ok' && <p class="muted">Data quality: {overview.data!.data_quality.replace(/_/g, ' ')}</p>}
        </Section>
      )}
      <Section title="Over time">
        <LineChart title="Daily ratios" days={chart.days} series={chart.series} />
      </Section>
      {tiers.data && (
        <Section title="Citations by tier">
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Tier</th>
                <th scope="col">Citation rate (of D)</th>
                <th scope="col">Citation share (of S)</th>
              </tr>
            </thead>
            <tbody>
              {tiers.data.tiers.map((row) => (
                <tr key={row.tier}>
                  <th scope="row">
                    <span class={`tier tier-${row.tier}`}>{row.label}</span>
                  </th>
                  <td>
                    <RatioView
                      ratio={row.citation_rate}
                      num={row.answers_citing}
                      den={tiers.data!.totals.cited_run_count}
                      label="cited answers"
                    />
                  </td>
                  <td>
                    <RatioView ratio={row.citation_share} num={row.citations} den={tiers.data!.totals.cited_total} label="citations" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
      <div class="columns">
        <Section title="Top domains">
          <SourceTable rows={(domains.data?.domains ?? []).map((d) => ({ ...d, name: d.domain }))} totals={domains.data?.totals} />
        </Section>
        <Section title="Top pages">
          <SourceTable
            rows={(pages.data?.pages ?? []).map((p) => ({ ...p, name: p.normalized_url ?? p.url }))}
            totals={pages.data?.totals}
          />
        </Section>
      </div>
      {won.data && (
        <Section title={`Prompts won and lost (${won.data.prompts_won} won, ${won.data.prompts_lost} lost)`}>
          {won.data.prompts.length === 0 && (
            <p class="muted">
              No tracked prompt has answers in this window.
              {untracked.length > 0 &&
                ` The answers here name ${untracked.length === 1 ? 'a prompt' : 'prompts'} not tracked: ${untracked.map(nameOf).join(', ')}.`}
            </p>
          )}
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Prompt</th>
                <th scope="col">Outcome</th>
                <th scope="col">Win rate</th>
              </tr>
            </thead>
            <tbody>
              {won.data.prompts.map((p) => (
                <tr key={p.prompt_id}>
                  <td>{p.name}</td>
                  <td>
                    <span class={`outcome outcome-${p.outcome}`}>{p.outcome}</span>
                  </td>
                  <td>
                    <RatioView ratio={p.win_rate} num={p.won_count} den={p.answer_count} label="answers" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
      {latest.data && (
        <Section title={`Latest answers (${latest.data.total_count})`}>
          <ul class="answers">
            {latest.data.answers.map((a) => (
              <li key={a.answer_id}>
                <p class="muted">
                  {nameOf(a.prompt_id)} · {a.model} · {a.location} · {formatDate(a.run_at)} {a.won ? '· won' : a.lost ? '· lost' : ''}
                </p>
                <p>{a.text.length > 400 ? `${a.text.slice(0, 400)}…` : a.text}</p>
                <ul class="cites" aria-label="Citations">
                  {a.citations.map((c, i) => (
                    <li key={i}>
                      <span class={`tier tier-${c.tier}`}>{tierLabel[c.tier]}</span>{' '}
                      <a href={c.url} rel="noreferrer noopener" target="_blank">
                        {c.url}
                      </a>
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </Section>
      )}
    </div>
  );
}

function SourceTable({ rows, totals }: { rows: (SourceRow & { name: string })[]; totals: Totals | undefined }) {
  if (!totals) return <p aria-busy="true">Loading…</p>;
  if (rows.length === 0) return <p>No citations in this window.</p>;
  return (
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Source</th>
          <th scope="col">Coverage</th>
          <th scope="col">Share</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.name}>
            <td class="wrap">{r.name}</td>
            <td>
              <RatioView ratio={r.coverage} num={r.answers_citing} den={totals.cited_run_count} label="cited answers" />
            </td>
            <td>
              <RatioView ratio={r.share} num={r.citations} den={totals.cited_total} label="citations" />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
