import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { markdownInlineHtml, markdownPlainText } from './markdown.js';

describe('inline Markdown of hosted pages', () => {
  it('renders emphasis, code and absolute links, and escapes raw HTML', () => {
    assert.equal(
      markdownInlineHtml('Use **bold**, `a < b` and [docs](https://x.test/a?b=1&c=2) <script>alert(1)</script>'),
      'Use <strong>bold</strong>, <code>a &lt; b</code> and <a href="https://x.test/a?b=1&amp;c=2" rel="nofollow noopener">docs</a> &lt;script&gt;alert(1)&lt;/script&gt;',
    );
  });

  it('keeps the words of links that lead nowhere from the page, and of images', () => {
    assert.equal(
      markdownInlineHtml('See [Server](./Server.md#close), [here](#close) and ![a *diagram*](./d.png).'),
      'See Server, here and a diagram.',
    );
    assert.equal(markdownInlineHtml('[x](javascript:alert(1)) [y](//evil.test/)'), '[x](javascript:alert(1)) y');
    assert.equal(markdownInlineHtml('[mail](mailto:a@b.test)'), '<a href="mailto:a@b.test" rel="nofollow noopener">mail</a>');
  });

  it('gives plain text without markup or entities, whitespace collapsed', () => {
    assert.equal(
      markdownPlainText('Closing a **Fastify** `server`,\nsee [docs](https://x.test) &amp; <b>more</b>'),
      'Closing a Fastify server, see docs & <b>more</b>',
    );
    assert.equal(markdownPlainText('  '), '');
  });
});
