import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { splitSentences } from './sentences.js';
import { sentenceSpans } from './verify/text.js';

describe('headings are their own units', () => {
  const chunk = 'Request ID Tracking\nBy default, Fastify adds an ID to every request.\nrequestIdHeader\nNo validation is performed.';

  it('splitSentences keeps a heading without end punctuation apart from the sentence under it', () => {
    assert.deepEqual(splitSentences(chunk), [
      'Request ID Tracking',
      'By default, Fastify adds an ID to every request.',
      'requestIdHeader',
      'No validation is performed.',
    ]);
  });

  it('sentenceSpans does too, with offsets', () => {
    const spans = sentenceSpans(chunk);
    assert.deepEqual(
      spans.map((s) => s.text),
      ['Request ID Tracking', 'By default, Fastify adds an ID to every request.', 'requestIdHeader', 'No validation is performed.'],
    );
    for (const s of spans) assert.equal(chunk.slice(s.start, s.end), s.text);
  });

  it('does not split a line wrapped inside a sentence', () => {
    assert.deepEqual(splitSentences('Hooks are registered with the\naddHook method and run in order.'), [
      'Hooks are registered with the addHook method and run in order.',
    ]);
    assert.deepEqual(
      sentenceSpans('The hook runs when the server\nstarts. It runs once.').map((s) => s.claim),
      ['The hook runs when the server starts.', 'It runs once.'],
    );
  });
});
