import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { authorVoice, isLayoutReference, isPointer, refersBack, voiceAllowsPerson } from './referents.js';

describe('refersBack', () => {
  it('holds for a sentence whose subject or opening leans on the sentence before it', () => {
    for (const s of [
      'This can be useful especially if you have a regex-based route.',
      'It returns a validation function.',
      'However, the hook runs first.',
      'Also, the reply is sent twice.',
      'The function returns a promise.',
      'The latter is faster.',
      'For example, a plugin can decorate the instance.',
      'By calling this function with a provided `schema`, it returns a `validation` function.',
      'Triggered when the server starts listening for requests.',
      'Evaluate its behavior and verify the requirements.',
      'In this case the body is empty.',
      'The only difference is that the first call is the plugin.',
    ])
      assert.equal(refersBack(s), true, s);
  });

  it('does not hold for a sentence that names its own subject', () => {
    for (const s of [
      'Fastify compiles the schema into a highly performant function.',
      'The `onRequest` hook runs before the body is parsed.',
      'Hooks are registered with the `addHook` method.',
      'Logging is disabled by default.',
      'A plugin can be a set of routes, a server decorator or whatever.',
      'There are two kinds of hooks: application hooks and request hooks.',
    ])
      assert.equal(refersBack(s), false, s);
  });
});

describe('authorVoice', () => {
  it('finds the source author’s first and second person', () => {
    for (const s of [
      "However, what I didn't tell you is that Fastify can avoid this behavior.",
      'We recommend the preHandler hook.',
      'If you need a database, register a plugin.',
      'Let’s register the plugin.',
      'Our benchmarks show the difference.',
    ])
      assert.equal(authorVoice(s), true, s);
  });

  it('leaves third person, imperatives, I/O and code alone', () => {
    for (const s of [
      'Register the plugin before the routes.',
      'Fastify handles I/O without blocking.',
      'The option `{ you: true }` is ignored.',
      'Plugins are loaded in order, i.e. one after another.',
    ])
      assert.equal(authorVoice(s), false, s);
  });

  it('is allowed when the brand kit asks for the reader to be addressed', () => {
    assert.equal(voiceAllowsPerson({ voice: 'friendly, second person' }), true);
    assert.equal(voiceAllowsPerson({ do_rules: ['Address the reader directly'] }), true);
    assert.equal(voiceAllowsPerson({ voice: 'plain and confident' }), false);
    assert.equal(voiceAllowsPerson({}), false);
  });
});

describe('isPointer and isLayoutReference', () => {
  it('find sentences that only send the reader elsewhere or point at the source’s layout', () => {
    for (const s of [
      'See .compileValidationSchema(schema, [httpStatus]) for more information on how to compile a validation schema.',
      'Read Validation and Serialization to learn more.',
      'For more details, see the Hooks reference.',
      'Refer to the Plugins guide.',
      'Check out the ecosystem page.',
    ])
      assert.equal(isPointer(s), true, s);
    for (const s of ['The following example registers two hooks.', 'This guide covers logging.', 'The options are listed below.'])
      assert.equal(isLayoutReference(s), true, s);
  });

  it('leave statements alone', () => {
    for (const s of [
      'Fastify uses Pino as its logger.',
      'Reading the body happens after the onRequest hook.',
      'Seeds are planted in spring.',
    ])
      assert.equal(isPointer(s) || isLayoutReference(s), false, s);
  });
});
