import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/preact';
import { SchemaEditor, SchemaFields, readSchemaForm, type JsonSchema } from './components/SchemaForm';
import { DraftView } from './pages/Generation';
import { Review } from './pages/Review';
import { ApiError, type Api } from './api';

afterEach(cleanup);

const api = (request: (method: string, path: string, body?: unknown) => Promise<unknown>): Api => ({
  signedIn: true,
  login: vi.fn(async () => {}),
  logout: vi.fn(async () => {}),
  request: vi.fn(request) as Api['request'],
  list: vi.fn(async () => ({ items: [], total: 0 })) as Api['list'],
  upload: vi.fn(async () => ({})),
});

const config: JsonSchema = {
  type: 'object',
  properties: {
    kind: { anyOf: [{ const: 'article' }, { const: 'qa' }] },
    format: {
      anyOf: [
        { type: 'string', enum: ['markdown'] },
        { type: 'string', enum: ['html'] },
      ],
    },
    auto_publish: { type: 'boolean' },
    target_length: { type: 'object', properties: { max_words: { type: 'integer', minimum: 10 } } },
    sections: { type: 'array', minItems: 1, items: { type: 'object', properties: { title: { type: 'string' } } } },
    do_rules: { type: 'array', items: { type: 'string' } },
    dont_rules: { type: 'array', items: { type: 'string' } },
    weights: { type: 'array', items: { type: 'integer' } },
    tone: { $ref: '#/components/schemas/Tone' },
  },
};

describe('SchemaFields', () => {
  it('offers exactly the keys of the schema, typed, and reads back only what was filled in', () => {
    render(
      <form data-testid="f">
        <SchemaFields
          schema={config}
          components={{ Tone: { type: 'string', description: 'how it sounds' } }}
          value={undefined}
          prefix="c."
        />
      </form>,
    );
    expect(screen.getByLabelText('Kind').tagName).toBe('SELECT');
    expect(screen.getByLabelText('Format').tagName).toBe('SELECT');
    expect(screen.getByText('how it sounds')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Kind'), { target: { value: 'qa' } });
    fireEvent.change(screen.getByLabelText('Auto publish'), { target: { value: 'true' } });
    fireEvent.input(screen.getByLabelText('Max words'), { target: { value: '300' } });
    // Sections are a form per entry (one to start with, as the schema needs one), not JSON.
    fireEvent.input(screen.getByLabelText('Title'), { target: { value: 'Answer' } });
    fireEvent.input(screen.getByLabelText('Do rules'), { target: { value: 'Cite\n\n Be brief ' } });
    expect(screen.getByLabelText("Don't rules")).toBeTruthy();
    const form = screen.getByTestId('f') as HTMLFormElement;
    expect(readSchemaForm(form, 'c.')).toEqual({
      kind: 'qa',
      auto_publish: true,
      target_length: { max_words: 300 },
      sections: [{ title: 'Answer' }],
      do_rules: ['Cite', 'Be brief'],
    });
    fireEvent.input(screen.getByLabelText('Weights'), { target: { value: '[1,' } });
    expect(() => readSchemaForm(form, 'c.')).toThrow(/c.weights is not valid JSON/);
  });

  it('adds and removes entries of a list of objects, keeping what was typed in the others', async () => {
    render(
      <form data-testid="f">
        <SchemaFields schema={config} components={{}} value={{ sections: [{ title: 'Intro' }, { title: 'Costs' }] }} prefix="c." />
      </form>,
    );
    const form = screen.getByTestId('f') as HTMLFormElement;
    expect(readSchemaForm(form, 'c.').sections).toEqual([{ title: 'Intro' }, { title: 'Costs' }]);
    fireEvent.click(screen.getByRole('button', { name: 'Add section' }));
    const titles = await screen.findAllByLabelText('Title');
    expect(titles).toHaveLength(3);
    fireEvent.input(titles[2]!, { target: { value: 'Warranty' } });
    fireEvent.click(screen.getByRole('button', { name: 'Remove section 1' }));
    await waitFor(() => expect(screen.getAllByLabelText('Title')).toHaveLength(2));
    expect(readSchemaForm(form, 'c.').sections).toEqual([{ title: 'Costs' }, { title: 'Warranty' }]);
  });

  it('offers the whole object as JSON, and reads the JSON view when it is open', async () => {
    render(
      <form data-testid="f">
        <SchemaEditor
          schema={config}
          components={{}}
          value={{ kind: 'qa', sections: [{ title: 'Intro' }] }}
          prefix="c."
          label="Configuration"
        />
      </form>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'JSON' }));
    const json = (await screen.findByLabelText('Configuration (JSON)')) as HTMLTextAreaElement;
    expect(JSON.parse(json.value)).toEqual({ kind: 'qa', sections: [{ title: 'Intro' }] });
    fireEvent.input(json, { target: { value: '{"kind":"summary","sections":[{"title":"Short"}]}' } });
    const form = screen.getByTestId('f') as HTMLFormElement;
    expect(readSchemaForm(form, 'c.')).toEqual({ kind: 'summary', sections: [{ title: 'Short' }] });
    // Back to the form, with what the JSON said.
    fireEvent.click(screen.getByRole('button', { name: 'Form' }));
    expect(((await screen.findByLabelText('Title')) as HTMLInputElement).value).toBe('Short');
  });
});

describe('DraftView', () => {
  /** The API for a draft view: the draft, and the titles of the sources the knowledge base knows. */
  const draftApi = (draft: unknown, titles: Record<string, string> = {}) =>
    api(async (_method, path) => {
      if (path.startsWith('/org/generation/drafts/')) return draft;
      const id = /^\/org\/kb\/content\/(.+)$/.exec(path)?.[1];
      if (id && titles[id]) return { id, title: titles[id] };
      throw new ApiError(404, 'Not found', 'not_found');
    });
  const evidenceOf = (sentence: HTMLElement) => document.getElementById(sentence.getAttribute('aria-describedby')!)!;

  it('marks every sentence with its verdict in words and shows its sources in a visible line', async () => {
    const draft = {
      draft_id: 'd1',
      revision: 2,
      title: 'Heat pumps',
      verification: 'needs_review',
      stale_sources: [{ content_id: 'c2345678-0000', reason: 'new_version' }],
      sections: [
        {
          section_id: 's',
          title: 'Overview',
          sentences: [
            {
              index: 0,
              text: 'Heat pumps move heat.',
              verdict: 'supported',
              citations: [{ content_id: 'c1234567-x', chunk_id: 'v:3', quote: 'move heat' }],
            },
            { index: 1, text: 'They never fail.', verdict: 'unsupported', citations: [] },
          ],
        },
      ],
    };
    render(<DraftView api={draftApi(draft)} id="d1" />);
    const supported = await screen.findByText('Heat pumps move heat.', { exact: false });
    expect(supported.className).toContain('v-supported');
    expect(supported.textContent).toContain('[supported]');
    const evidence = evidenceOf(supported);
    expect(evidence.textContent).toContain('Source says: “move heat” — content c1234567, chunk 3');
    expect(evidence.getAttribute('role')).toBeNull(); // shown, not a tooltip
    const unsupported = screen.getByText('They never fail.', { exact: false });
    expect(unsupported.textContent).toContain('[unsupported]');
    expect(evidenceOf(unsupported).textContent).toBe('Why: No source in the knowledge base states this.');
    expect(screen.getByRole('note').textContent).toMatch(/1 cited source\(s\) changed/);
  });

  it('shows a paraphrased sentence the source’s own words, and a contradicted one its reason and closest span', async () => {
    const draft = {
      draft_id: 'd2',
      revision: 1,
      title: 'Vitamin D',
      verification: 'needs_review',
      stale_sources: [],
      sections: [
        {
          section_id: 's',
          title: 'Findings',
          sentences: [
            {
              index: 0,
              text: 'Taking vitamin D lowers the risk of fractures in older adults.',
              verdict: 'supported',
              citations: [
                {
                  content_id: 'a1111111-0000',
                  version_id: 'v1',
                  chunk_id: 'v1:4',
                  quote: 'Supplementation reduced hip fracture incidence among participants aged 65 and over.',
                  score: 0.81,
                },
              ],
            },
            {
              index: 1,
              text: 'Vitamin D has no effect on bone density.',
              verdict: 'contradicted',
              reason: 'The source reports a gain in bone density.',
              citations: [{ content_id: 'b2222222-0000', chunk_id: 'v2:0', quote: 'Bone mineral density rose by 2% after a year.' }],
            },
            { index: 2, text: 'Vitamin D is made in the skin.', verdict: 'contradicted', citations: [] },
            { index: 3, text: 'Read on.', verdict: 'not_factual', citations: [] },
          ],
        },
      ],
    };
    render(<DraftView api={draftApi(draft, { 'a1111111-0000': 'Fracture trial 2019' })} id="d2" />);
    const paraphrase = await screen.findByText('Taking vitamin D lowers', { exact: false });
    expect(paraphrase.textContent).toContain('[supported, in other words]');
    const span = evidenceOf(paraphrase);
    expect(span.textContent).toContain(
      'Source says: “Supplementation reduced hip fracture incidence among participants aged 65 and over.”',
    );
    const source = await waitFor(() => within(span).getByRole('link', { name: 'Fracture trial 2019' }));
    expect(source.getAttribute('href')).toBe('#/kb/content/a1111111-0000');

    const contradicted = screen.getByText('Vitamin D has no effect', { exact: false });
    expect(contradicted.textContent).toContain('[contradicted]');
    const why = evidenceOf(contradicted);
    expect(why.textContent).toContain('Why: The source reports a gain in bone density.');
    expect(why.textContent).toContain('Source says: “Bone mineral density rose by 2% after a year.” — content b2222222, chunk 0');

    const bare = screen.getByText('Vitamin D is made in the skin.', { exact: false });
    expect(evidenceOf(bare).textContent).toBe('Why: The source says otherwise.');
    const notFactual = screen.getByText('Read on.', { exact: false });
    expect(notFactual.textContent).toContain('[not a factual claim]');
    expect(notFactual.getAttribute('aria-describedby')).toBeNull();
  });
});

describe('Review', () => {
  it('lists the queue and shows the publish gate’s refusal when publishing', async () => {
    const piece = {
      piece_id: 'p1',
      title: 'Piece one',
      status: 'approved',
      revision: 1,
      verification: 'verified',
      publishable: true,
      unsupported_sentences: [],
      stale_sources: [],
      reviewer: null,
      review_comment: null,
      approved_revision: 1,
      publications: [],
      history: [{ event: 'approved', actor: 'user:a', at: '2026-11-23T10:00:00Z' }],
    };
    const calls: string[] = [];
    const fake = api(async (method, path) => {
      calls.push(`${method} ${path}`);
      if (path === '/org/content/review-queue')
        return [
          {
            piece_id: 'p1',
            title: 'Piece one',
            status: 'in_review',
            waiting_for: 'anyone',
            waiting_since: '2026-11-23T10:00:00Z',
            publishable: true,
          },
        ];
      if (path.startsWith('/org/content/pieces?')) return [piece];
      if (path === '/org/destinations') return [{ destination_id: 'h', name: 'Hosted pages', type: 'hosted', enabled: true }];
      if (path === '/org/content/pieces/p1') return piece;
      if (path === '/org/content/pieces/p1/publish') throw new ApiError(422, 'The piece has unsupported sentences', 'unverified_content');
      return undefined;
    });
    render(<Review api={fake} pieceId="p1" />);
    expect(await screen.findByText(/waiting for anyone/)).toBeTruthy();
    fireEvent.click(await screen.findByLabelText(/Hosted pages/));
    fireEvent.click(screen.getByRole('button', { name: 'Publish' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('The piece has unsupported sentences'));
    expect(calls).toContain('POST /org/content/pieces/p1/publish');
  });
});
