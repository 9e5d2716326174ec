import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isCodeLike, proseRanges, stripInlineMarkup } from './prose.js';

const slices = (text: string) => proseRanges(text).map((r) => text.slice(r.start, r.end));

describe('proseRanges', () => {
  it('leaves out fenced code blocks, fence lines included', () => {
    const text = 'Register a hook:\n```\nfastify.addHook(x)\n```\nThen start.\n~~~js\nmore();\n~~~\n```\nend()\n```';
    assert.deepEqual(slices(text), ['Register a hook:\n', '\nThen start.\n']);
    const ranges = proseRanges(text);
    assert.deepEqual(ranges[0], { start: 0, end: 17 });
  });

  it('runs an unclosed fence to the end; closes only on the same character, at least as long, alone on its line', () => {
    assert.deepEqual(slices('Prose.\n```js\ncode\n'), ['Prose.\n']);
    assert.deepEqual(slices('A\n````\n```\nstill code\n````\nB'), ['A\n', '\nB']);
    assert.deepEqual(slices('A\n~~~\n```\nstill code\n~~~\nB'), ['A\n', '\nB']);
    assert.deepEqual(slices('A\n```\n```js\nstill code\n```\nB'), ['A\n', '\nB']);
    // Inline code of three backticks in a line is no fence.
    assert.deepEqual(slices('```x``` is inline\nmore'), ['```x``` is inline\nmore']);
    assert.deepEqual(slices('Only prose.'), ['Only prose.']);
    assert.deepEqual(slices(''), []);
  });

  it('gives ascending, non-overlapping ranges that with the code cover the text (property)', () => {
    const line = fc.oneof(fc.constantFrom('```', '~~~', '```js', '````', '    ```', ''), fc.stringMatching(/^[a-z `~.]{0,20}$/));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
        const text = lines.join('\n');
        let at = 0;
        for (const r of proseRanges(text)) {
          assert.ok(r.start >= at && r.end > r.start && r.end <= text.length);
          at = r.end;
        }
      }),
    );
  });
});

describe('isCodeLike', () => {
  it('is true for code and markup residue', () => {
    for (const s of [
      "fastify.addHook('preHandler', (request, reply, done) => { // some code done() })",
      'reply.send({ hello: "world" })',
      'if (ready) { start(); }',
      '// some code',
      "const fastify = require('fastify')();",
      "import Fastify from 'fastify'",
      'See [`fastify.close()`](./Server.md#close) for details.',
      '<a id="lifecycle"></a> Lifecycle',
      'Text</span> here',
      '[test]: https://github.com/fastify/fastify',
      'https://github.com/fastify/fastify/blob/main/test/hooks-async.js',
      '```js',
      '`fastify.close()`',
      'x &amp;&amp; y',
      '$ npm install fastify',
      '{}[]<>=;|$#@*+',
    ]) {
      assert.equal(isCodeLike(s), true, s);
    }
  });

  it('is false for ordinary prose, with inline code, numbers, percentages, parentheses or citation markers', () => {
    for (const s of [
      'Hooks are registered with the `fastify.addHook` method.',
      'Use `(request, reply) => {}` as the handler.',
      'The rate rose by 3.5% (from 2020) to 12 units.',
      'The panels carry a twenty five year performance warranty. [1]',
      'sku: S-99; product: Hybrid inverter 6kW; price: 1299; currency: EUR',
      'A {name} placeholder is filled in later.',
      'Costs are 10 EUR/month and 100 EUR/year for 2-3 users.',
      'See https://fastify.dev for the documentation.',
      'Returns a Promise<void> when no callback is given.',
      'Q&A sessions run on Fridays; bring questions.',
      'Note: snake_case names are kept.',
      '2020.',
      '25 %',
    ]) {
      assert.equal(isCodeLike(s), false, s);
    }
  });
});

describe('stripInlineMarkup', () => {
  it('reads links as their text, removes tags and anchors, decodes entities, keeps inline code in backticks', () => {
    assert.equal(
      stripInlineMarkup(
        '<a id="hooks"></a>Call [`fastify.close()`](./Server.md#close), see [test/hooks-async.js](https://github.com/f/f/blob/main/test/hooks-async.js) and [the guide][g]. **Bold**, *em*, __strong__, _em_ &amp; ~~old~~<br>done.',
      ),
      'Call `fastify.close()`, see test/hooks-async.js and the guide. Bold, em, strong, em & old done.',
    );
    assert.equal(stripInlineMarkup('![diagram](a.png) <https://fastify.dev> `**kept**`'), 'diagram https://fastify.dev `**kept**`');
  });

  it('drops reference definitions and blockquote markers, resolves shortcut references to defined labels', () => {
    assert.equal(stripInlineMarkup('> Read [Reply] and [other].\n> More.\n\n[reply]: ./Reply.md'), 'Read Reply and [other].\nMore.\n');
  });

  it('leaves fenced code, citation markers, arithmetic, snake_case and placeholders alone', () => {
    const code = '```\nconst a = [b](c); **x** <br>\n```';
    assert.equal(stripInlineMarkup(`Intro *x*\n${code}\nAfter`), `Intro x\n${code}\nAfter`);
    for (const s of [
      'A claim [1][2] and [3].',
      'a * b * c and 2*3 and *args, **kwargs',
      'snake_case_name and __init',
      'kb upload <path> and Array<string>',
    ]) {
      assert.equal(stripInlineMarkup(s), s);
    }
  });
});
