import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { RatioView, StatusBadge } from './components/common';
import { answerParts, highlightParts, Search } from './pages/Search';
import { queryOf, windowWithData } from './pages/Analytics';
import { kindOfContent } from './pages/KnowledgeBase';
import { SignIn } from './pages/SignIn';
import { Webhooks } from './pages/Destinations';
import { ApiError, type Api } from './api';

afterEach(cleanup);

function fakeApi(overrides: Partial<Api> = {}): Api {
  return {
    signedIn: true,
    login: vi.fn(async () => {}),
    logout: vi.fn(async () => {}),
    request: vi.fn(async () => undefined) as Api['request'],
    list: vi.fn(async () => ({ items: [], total: 0 })) as Api['list'],
    upload: vi.fn(async () => ({ files: [] })),
    ...overrides,
  };
}

describe('answerParts', () => {
  it('splits an answer into text and citation numbers', () => {
    expect(answerParts('Panels last 25 years. [1] Inverters 10 [2][3].')).toEqual([
      'Panels last 25 years. ',
      1,
      ' Inverters 10 ',
      2,
      3,
      '.',
    ]);
    expect(answerParts('No sources.')).toEqual(['No sources.']);
  });
});

describe('highlightParts', () => {
  const answer = 'Clean the panels every three months with soft water. [1]';
  it('marks a quoted sentence after a heading at the start of the chunk', () => {
    const parts = highlightParts('# Solar panel care\n\nClean the panels every three months with soft water. Check the inverter.', answer);
    expect(parts.filter((p) => p.quoted).map((p) => p.text)).toEqual(['Clean the panels every three months with soft water.']);
    expect(parts.map((p) => p.text).join('')).toBe(
      '# Solar panel care\n\nClean the panels every three months with soft water. Check the inverter.',
    );
  });
  it('finds a sentence whose whitespace runs differently, and marks nothing the answer does not say', () => {
    expect(highlightParts('Clean the panels every\nthree months  with soft water.', answer).some((p) => p.quoted)).toBe(true);
    expect(highlightParts('Check the inverter display once a month.', answer).some((p) => p.quoted)).toBe(false);
  });
});

describe('kindOfContent', () => {
  it('names raw text Text and a file by its format', () => {
    expect(kindOfContent({ type: 'raw' })).toBe('Text');
    expect(kindOfContent({ type: 'file', format: 'pdf' })).toBe('PDF');
    expect(kindOfContent({ type: 'file' })).toBe('File');
  });
});

describe('windowWithData', () => {
  it('moves to the 30 days up to the latest answer of the last two years', async () => {
    const request = vi.fn(async () => ({ answers: [{ run_at: '2026-03-02T10:00:00Z' }] }));
    const api = fakeApi({ request: request as Api['request'] });
    expect(await windowWithData(api, new Date('2026-11-28T02:00:00Z'))).toEqual({
      from: '2026-02-01',
      to: '2026-03-02',
      latest: '2026-03-02',
    });
    expect(request).toHaveBeenCalledWith('GET', '/org/analytics/answers/latest?from=2024-11-28&to=2026-11-28&limit=1');
  });
  it('says there is none when no answer is found', async () => {
    const api = fakeApi({ request: vi.fn(async () => ({ answers: [] })) as Api['request'] });
    expect(await windowWithData(api, new Date('2026-11-28T02:00:00Z'))).toBeUndefined();
  });
});

describe('queryOf', () => {
  it('keeps only the filters that are set', () => {
    const q = queryOf({ from: '2026-11-01', to: '2026-11-23', prompt_id: '', tag_id: 't1', model: '', location: '' }, { limit: '10' });
    expect(q).toBe('from=2026-11-01&to=2026-11-23&tag_id=t1&limit=10');
  });
});

describe('RatioView', () => {
  it('shows the display value and its numerator and denominator as a tooltip', () => {
    render(<RatioView ratio={{ value: 0.25, display: '25.0%' }} num={1} den={4} label="answers" />);
    expect(screen.getByText('25.0%')).toBeTruthy();
    expect(screen.getByRole('tooltip').textContent).toBe('1 / 4 answers');
  });
  it('says n/a for a ratio without a denominator', () => {
    render(<RatioView ratio={{ value: null, display: 'n/a' }} num={0} den={0} label="answers" />);
    expect(screen.getByText('n/a')).toBeTruthy();
  });
});

describe('StatusBadge', () => {
  it('names each processing state', () => {
    render(<StatusBadge status="failed" />);
    expect(screen.getByText('Failed').className).toContain('badge-failed');
  });
});

describe('SignIn', () => {
  it('signs in with the form values', async () => {
    const api = fakeApi();
    const onSignedIn = vi.fn();
    render(<SignIn api={api} onSignedIn={onSignedIn} />);
    fireEvent.input(screen.getByLabelText('Email'), { target: { value: 'a@example.com' } });
    fireEvent.input(screen.getByLabelText('Password'), { target: { value: 'correct horse battery' } });
    fireEvent.submit(screen.getByRole('button', { name: 'Sign in' }).closest('form')!);
    await waitFor(() => expect(onSignedIn).toHaveBeenCalled());
    expect(api.login).toHaveBeenCalledWith('a@example.com', 'correct horse battery');
  });
  it('shows why a sign-in failed', async () => {
    const api = fakeApi({ login: vi.fn(async () => Promise.reject(new ApiError(401, 'Wrong email or password'))) });
    render(<SignIn api={api} onSignedIn={() => {}} />);
    fireEvent.submit(screen.getByRole('button', { name: 'Sign in' }).closest('form')!);
    expect((await screen.findByRole('alert')).textContent).toBe('Wrong email or password');
  });
});

describe('Search', () => {
  it('opens the passage a citation points at', async () => {
    const request = vi.fn(async () => ({
      query: 'warranty',
      answer: 'The panels carry a twenty five year warranty. [1]',
      answered: true,
      citations: [],
      context: [
        {
          content_id: 'c1',
          version_id: 'v1',
          chunk_index: 0,
          chunk_text: 'The panels carry a twenty five year warranty.',
          score: 1,
          title: 'Guide',
        },
      ],
      total_results: 1,
      processing_time_ms: 3,
    }));
    render(<Search api={fakeApi({ request: request as Api['request'] })} />);
    fireEvent.input(screen.getByLabelText('Question'), { target: { value: 'warranty?' } });
    fireEvent.submit(screen.getByRole('search'));
    const cite = await screen.findByRole('button', { name: 'Source 1: Guide' });
    expect(request).toHaveBeenCalledWith('POST', '/org/search', { query: 'warranty?', max_results: 10 });
    fireEvent.click(cite);
    const passage = screen.getByLabelText('Cited passage 1');
    expect(passage.querySelector('mark')?.textContent?.trim()).toBe('The panels carry a twenty five year warranty.');
    expect(passage.querySelector('a')?.getAttribute('href')).toBe('#/kb/content/c1');
  });
});

describe('Webhooks', () => {
  it('names a cancelled delivery and offers no redelivery for it', async () => {
    const deliveries = [
      { delivery_id: 'd1', event_type: 'content.approved', status: 'cancelled', attempts: 2, created_at: '2026-11-28T03:00:00Z' },
      { delivery_id: 'd2', event_type: 'content.approved', status: 'failed', attempts: 8, created_at: '2026-11-28T03:00:00Z' },
    ];
    const request = vi.fn(async (_method: string, path: string) => {
      if (path === '/org/webhooks') return [{ subscription_id: 's1', url: 'https://hooks.example/x', event_kinds: ['content.approved'] }];
      if (path === '/org/webhooks/s1/deliveries') return deliveries;
      return { paths: {} };
    }) as Api['request'];
    render(<Webhooks api={fakeApi({ request })} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Deliveries' }));
    const cancelled = (await screen.findByText(/^Cancelled/)).closest('tr')!;
    expect(cancelled.querySelector('button')!.disabled).toBe(true);
    const failed = screen.getByText('Failed').closest('tr')!;
    expect(failed.querySelector('button')!.disabled).toBe(false);
  });
});
