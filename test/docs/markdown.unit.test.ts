import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { fencedBlocks, headingAnchors, isExternal, linksOf, parseHttpExample, runnableKind, slugOf } from './markdown.js';

const page = [
  '# Search, answers and prompts',
  '',
  'See [the API](api.md#credits) and [MCP](https://modelcontextprotocol.io), not `[code](x.md)`.',
  '',
  '```sh runnable',
  'curl -s http://127.0.0.1:8080/health/live',
  '# [not a link](nowhere.md)',
  '```',
  '',
  '## `POST /search`: the answer',
  '',
  '````markdown',
  '```sh',
  'inside a longer fence',
  '```',
  '````',
  '',
  '## Limits',
  '## Limits',
].join('\n');

describe('the Markdown the docs test reads', () => {
  it('finds fenced blocks with their info string and line, nested fences included', () => {
    const blocks = fencedBlocks(page);
    assert.deepEqual(
      blocks.map((b) => [b.info, b.line]),
      [
        ['sh runnable', 5],
        ['markdown', 12],
      ],
    );
    assert.equal(blocks[0]!.code, 'curl -s http://127.0.0.1:8080/health/live\n# [not a link](nowhere.md)');
    assert.equal(blocks[1]!.code, '```sh\ninside a longer fence\n```');
  });

  it('marks only sh, bash, shell and http blocks with the runnable flag, and refuses other languages', () => {
    assert.equal(runnableKind({ info: 'sh runnable', code: '', line: 1 }), 'shell');
    assert.equal(runnableKind({ info: 'bash runnable', code: '', line: 1 }), 'shell');
    assert.equal(runnableKind({ info: 'http runnable', code: '', line: 1 }), 'http');
    assert.equal(runnableKind({ info: 'sh', code: '', line: 1 }), undefined);
    assert.throws(() => runnableKind({ info: 'json runnable', code: '', line: 1 }), /json/);
  });

  it("makes GitHub's anchors, repeated headings suffixed", () => {
    assert.equal(
      slugOf('Publishing: review, destinations, hosted pages, webhooks'),
      'publishing-review-destinations-hosted-pages-webhooks',
    );
    assert.equal(slugOf('`POST /search`: the answer'), 'post-search-the-answer');
    assert.deepEqual([...headingAnchors(page)], ['search-answers-and-prompts', 'post-search-the-answer', 'limits', 'limits-1']);
  });

  it('finds links in prose only, never in code', () => {
    assert.deepEqual(linksOf(page), [
      { target: 'api.md#credits', line: 3 },
      { target: 'https://modelcontextprotocol.io', line: 3 },
    ]);
    assert.equal(isExternal('https://x.org'), true);
    assert.equal(isExternal('docs/api.md#credits'), false);
  });

  it('reads an http example: request line, headers, body', () => {
    const example = parseHttpExample('POST /api/v1/search\nX-API-Key: k\nContent-Type: application/json\n\n{"query":"q"}');
    assert.deepEqual(example, {
      method: 'POST',
      path: '/api/v1/search',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      body: '{"query":"q"}',
    });
    assert.throws(() => parseHttpExample('fetch the page'), /request line/);
  });
});
