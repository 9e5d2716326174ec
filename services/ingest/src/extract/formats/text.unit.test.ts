import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { cleanInline, extractMarkdown } from './text.js';

describe('Markdown (raw text intake)', () => {
  it('makes each list item a paragraph of its own, without its marker, with its continuation lines', () => {
    const blocks = extractMarkdown(
      '## Running costs\n\nA heat pump uses a third of the electricity.\n- Service the unit\n  every two years.\n- Keep the outdoor unit free of leaves.\n1. First step.\n2) Second step.\n',
    );
    assert.deepEqual(blocks, [
      { kind: 'heading', level: 2, text: 'Running costs' },
      { kind: 'paragraph', text: 'A heat pump uses a third of the electricity.' },
      { kind: 'paragraph', text: 'Service the unit every two years.' },
      { kind: 'paragraph', text: 'Keep the outdoor unit free of leaves.' },
      { kind: 'paragraph', text: 'First step.' },
      { kind: 'paragraph', text: 'Second step.' },
    ]);
  });

  it('keeps a code fence as a code block (list markers inside it alone), and drops a thematic break', () => {
    // Before issue 33 the fence's lines became a prose paragraph.
    assert.deepEqual(extractMarkdown('```\n- not an item\n```\n\n---\n\nText after a rule.'), [
      { kind: 'code', text: '- not an item' },
      { kind: 'paragraph', text: 'Text after a rule.' },
    ]);
  });

  it('extracts a reference page (links, reference links, anchors, emphasis, inline code, a fence, headings) to clean blocks', () => {
    const page = [
      '<h1 align="center">Fastify</h1>',
      '',
      '<a id="hooks"></a>',
      '## Hooks',
      'Hooks are registered with the `fastify.addHook` method. See [`fastify.close()`](./Server.md#close) and',
      '[test/hooks-async.js](https://github.com/fastify/fastify/blob/main/test/hooks-async.js) for **more** _examples_.',
      '',
      '<a id="on-request"></a>',
      '### `onRequest` <a name="x"></a>',
      '```js',
      "fastify.addHook('preHandler', (request, reply, done) => {",
      '  // some code',
      '  done()',
      '})',
      '```',
      '',
      '> ℹ️ Note: read the [lifecycle][lc] and [Reply] pages; `snake_case_name` and 2 * 3 stay &amp; <br> entities decode.',
      '',
      '![diagram](./lifecycle.png) <https://fastify.dev/docs>',
      '',
      '[lc]: ./Lifecycle.md',
      '[reply]: ./Reply.md "Reply"',
    ].join('\n');
    assert.deepEqual(extractMarkdown(page), [
      { kind: 'heading', level: 1, text: 'Fastify' },
      { kind: 'heading', level: 2, text: 'Hooks' },
      {
        kind: 'paragraph',
        text: 'Hooks are registered with the `fastify.addHook` method. See `fastify.close()` and test/hooks-async.js for more examples.',
      },
      { kind: 'heading', level: 3, text: 'onRequest' },
      {
        kind: 'code',
        text: "fastify.addHook('preHandler', (request, reply, done) => {\n  // some code\n  done()\n})",
      },
      {
        kind: 'paragraph',
        text: 'ℹ️ Note: read the lifecycle and Reply pages; `snake_case_name` and 2 * 3 stay & entities decode.',
      },
      { kind: 'paragraph', text: 'diagram https://fastify.dev/docs' },
    ]);
  });

  it('reads ~~~ fences, indented code that reads as code, <pre> blocks and unclosed fences as code; an indented paragraph stays prose', () => {
    assert.deepEqual(
      extractMarkdown(
        '~~~sh\nnpm i fastify\n~~~\n\nExample:\n\n    const app = fastify();\n    app.listen();\nThen:\n\n    Just an indented paragraph of prose.\n\n<pre><code>a &lt; b\n  c</code></pre>\n\n```\nopen to the end\n',
      ),
      [
        { kind: 'code', text: 'npm i fastify' },
        { kind: 'paragraph', text: 'Example:' },
        { kind: 'code', text: 'const app = fastify();\napp.listen();' },
        { kind: 'paragraph', text: 'Then:' },
        { kind: 'paragraph', text: 'Just an indented paragraph of prose.' },
        { kind: 'code', text: 'a < b\n  c' },
        { kind: 'code', text: 'open to the end' },
      ],
    );
    // A fence inside a list item keeps the code's own indentation relative to the fence.
    assert.deepEqual(extractMarkdown('- Install:\n  ```\n  npm i\n    --save\n  ```\n'), [
      { kind: 'paragraph', text: 'Install:' },
      { kind: 'code', text: 'npm i\n  --save' },
    ]);
  });

  it('reads tables with or without outer pipes, cells cleaned; setext headings; front matter, comments and HTML-only lines go', () => {
    assert.deepEqual(
      extractMarkdown(
        '---\ntitle: Hooks\n---\nOverview\n========\n\n<!--\na comment\n-->\n<div align="center">\n\nName | Link\n--- | ---\n**a** | [docs](https://x.y)\n`a\\|b` | c\n\nSub part\n--------\nText.\n</div>\n',
      ),
      [
        { kind: 'heading', level: 1, text: 'Overview' },
        { kind: 'row', text: 'Name | Link' },
        { kind: 'row', text: 'a | docs' },
        { kind: 'row', text: '`a|b` | c' },
        { kind: 'heading', level: 2, text: 'Sub part' },
        { kind: 'paragraph', text: 'Text.' },
      ],
    );
  });

  it('leaves text that only looks like markup alone', () => {
    assert.deepEqual(
      extractMarkdown('C# is a language\n\n#hashtag and a<b and x>y, Array<string>, kb upload <path>, *args and **kwargs.'),
      [
        { kind: 'paragraph', text: 'C# is a language' },
        { kind: 'paragraph', text: '#hashtag and a<b and x>y, Array<string>, kb upload <path>, *args and **kwargs.' },
      ],
    );
    assert.deepEqual(extractMarkdown('## C#\n\nCitations [1][2] and [3] stay; so does file_name_here.'), [
      { kind: 'heading', level: 2, text: 'C#' },
      { kind: 'paragraph', text: 'Citations [1][2] and [3] stay; so does file_name_here.' },
    ]);
  });
});

describe('cleanInline', () => {
  it('keeps inline code (in backticks, content untouched) and escaped characters', () => {
    assert.equal(
      cleanInline('Use `**not bold** [x](y)` and ``a ` b`` and \\*not em\\*.'),
      'Use `**not bold** [x](y)` and `` a ` b `` and *not em*.',
    );
    assert.equal(cleanInline('The `onSend` <code>hook</code>', { code: 'bare' }), 'The onSend hook');
  });

  it('reads links, images and autolinks as their text, and removes HTML', () => {
    assert.equal(cleanInline('[![CI](https://ci/badge.svg)](https://ci) and [a (b)](https://x.y/a_(b)) "t")'), 'CI and a (b) "t")');
    assert.equal(cleanInline('<a href="https://x.y">site</a><sup>1</sup> <!-- hidden --> <script>x()</script>ok'), 'site1 ok');
    assert.equal(cleanInline('Mail <me@example.com>, see https://x.y/_a_/b.'), 'Mail me@example.com, see https://x.y/_a_/b.');
  });
});
