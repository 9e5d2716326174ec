import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createFactChecker } from './checker.js';
import { stripLeadIns } from './lead-in.js';
import { areAntonyms, areSynonyms, isDictionaryWord } from './lexicon.js';
import type { EvidencePassage } from './port.js';

/**
 * The agreement checks on the aligned words, without a model: one source
 * sentence backs a claim; an antonym, another code token, number, unit,
 * negation, quantifier or name in it contradicts the claim, quoting that
 * sentence. Passages are chunks of the Fastify docs as the ingest service
 * stores them (a heading on its own line above its paragraph).
 */

const passage = (id: string, text: string): EvidencePassage => ({ content_id: id, version_id: `${id}-v1`, chunk_id: `${id}-v1:0`, text });

const LOGGING = passage(
  'logging',
  "Enable Logging\nLogging is disabled by default. Enable it by passing `{ logger: true }` or `{ logger: { level: 'info' } }` when creating a Fastify instance. " +
    "As Fastify is focused on performance, it uses pino as its logger, with the default log level set to `'info'` when enabled.\n" +
    'Request ID Tracking\nBy default, Fastify adds an ID to every request for easier tracking.\n' +
    'Any logger other than Pino will ignore the `serializers` option.',
);
const HOOKS = passage(
  'hooks',
  'Hooks\nHooks are registered with the `fastify.addHook` method and allow you to listen to specific events in the application or request/response lifecycle. ' +
    'You have to register a hook before the event is triggered, otherwise, the event is lost.\n' +
    'Scope\nExcept for onClose, all hooks are encapsulated.\n' +
    'The `:start` and `:end` events always fire for requests.\n' +
    'onRoute\nTriggered when a new route is registered. The interface is synchronous, and, as such, the listeners are not passed a callback.',
);
const SERVER = passage(
  'server',
  'pluginTimeout\nDefault: `10000`\nThe maximum amount of time in milliseconds in which a plugin can load.\n' +
    'requestTimeout\nIt must be set to a non-zero value (e.g. 120 seconds) to protect against potential Denial-of-Service attacks in case the server is deployed without a reverse proxy in front.\n' +
    'To accept more methods, the `addHttpMethod` must be used.\n' +
    'Calling `close` will also cause the server to respond to every new incoming request with a `503` error and destroy that request.\n' +
    'Fastify calls setNotFoundHandler to add a default 404 handler at startup before plugins are registered.',
);
const VALIDATION = passage(
  'validation',
  'Error Handling\nWhen schema validation fails for a request, Fastify will automatically return a status 400 response including the result from the validator in the payload.\n' +
    'The default error format is the Ajv one.\n' +
    '`fastify-plugin` breaks encapsulation only for the plugin it wraps. Plugins registered inside it without `fastify-plugin` still create new encapsulated contexts.',
);

const checker = createFactChecker();
const retrieve = async () => [LOGGING, HOOKS, SERVER, VALIDATION];
const one = async (text: string) => {
  const [s, ...rest] = await checker.check({ text, retrieve });
  assert.equal(rest.length, 0, `one sentence expected in ${text}`);
  return s!;
};

/** The claim is contradicted, quoting the sentence it was made from, for the reason given. */
async function contradicts(claim: string, source: string, reason: RegExp) {
  const s = await one(claim);
  assert.equal(s.verdict, 'contradicted', `${claim}: ${s.verdict} (${s.reason ?? ''})`);
  assert.equal(s.support[0]!.quote, source, claim);
  assert.match(s.reason!, reason, claim);
}

describe('agreement on the aligned words', () => {
  it('antonyms from WordNet contradict, quoting the span (enabled / disabled, synchronous / asynchronous, start / stop, lowercase / uppercase)', async () => {
    await contradicts('Logging is enabled by default.', 'Logging is disabled by default.', /"enabled" where the source says "disabled"/);
    await contradicts(
      'The interface is asynchronous, and, as such, the listeners are not passed a callback.',
      'The interface is synchronous, and, as such, the listeners are not passed a callback.',
      /asynchronous/,
    );
    await contradicts(
      'The minimum amount of time in milliseconds in which a plugin can load.',
      'The maximum amount of time in milliseconds in which a plugin can load.',
      /"minimum" where the source says "maximum"/,
    );
    await contradicts(
      'Fastify calls setNotFoundHandler to add a default 404 handler at startup after plugins are registered.',
      'Fastify calls setNotFoundHandler to add a default 404 handler at startup before plugins are registered.',
      /after/,
    );
  });

  it('code tokens are compared exactly: another method, option or package name contradicts', async () => {
    const hooks =
      'Hooks are registered with the `fastify.addHook` method and allow you to listen to specific events in the application or request/response lifecycle.';
    await contradicts(
      'Hooks are registered with the `fastify.useHook` method.',
      hooks,
      /`fastify.useHook` where the source names `fastify.addHook`/,
    );
    await contradicts('Hooks are registered with the fastify.registerHook method.', hooks, /fastify.registerHook/);
    await contradicts(
      'Any logger other than Pino will ignore the `formatters` option.',
      'Any logger other than Pino will ignore the `serializers` option.',
      /formatters/,
    );
    await contradicts(
      '`fastify-register` breaks encapsulation only for the plugin it wraps.',
      '`fastify-plugin` breaks encapsulation only for the plugin it wraps.',
      /fastify-register/,
    );
    // The same name, in code or not, with or without its object, agrees.
    assert.equal((await one('Hooks are registered with the addHook method.')).verdict, 'supported');
  });

  it('another number, status code or unit contradicts; the same amount in other units agrees', async () => {
    const close =
      'Calling `close` will also cause the server to respond to every new incoming request with a `503` error and destroy that request.';
    await contradicts(
      'Calling `close` will also cause the server to respond to every new incoming request with a `502` error and destroy that request.',
      close,
      /502/,
    );
    await contradicts(
      'The maximum amount of time in seconds in which a plugin can load.',
      'The maximum amount of time in milliseconds in which a plugin can load.',
      /"seconds" where the source says "milliseconds"/,
    );
    const timeout =
      'It must be set to a non-zero value (e.g. 120 seconds) to protect against potential Denial-of-Service attacks in case the server is deployed without a reverse proxy in front.';
    await contradicts(
      'It must be set to a non-zero value (e.g. 120 milliseconds) to protect against potential Denial-of-Service attacks in case the server is deployed without a reverse proxy in front.',
      timeout,
      /120/,
    );
    const same = await one(
      'It must be set to a non-zero value (e.g. 2 minutes) to protect against potential Denial-of-Service attacks in case the server is deployed without a reverse proxy in front.',
    );
    assert.equal(same.verdict, 'supported', same.reason);
  });

  it('an added or dropped negation contradicts', async () => {
    await contradicts('Logging is not disabled by default.', 'Logging is disabled by default.', /negation/);
    await contradicts(
      'The interface is synchronous, and, as such, the listeners are passed a callback.',
      'The interface is synchronous, and, as such, the listeners are not passed a callback.',
      /negation/,
    );
    await contradicts(
      'Any logger other than Pino will not ignore the `serializers` option.',
      'Any logger other than Pino will ignore the `serializers` option.',
      /negation/,
    );
  });

  it('another quantifier or modal contradicts (always / sometimes, all / some, must / may, only / every)', async () => {
    const events = 'The `:start` and `:end` events always fire for requests.';
    await contradicts('The `:start` and `:end` events sometimes fire for requests.', events, /"sometimes" where the source says "always"/);
    await contradicts('The `:start` and `:end` events never fire for requests.', events, /never/);
    await contradicts(
      'Except for onClose, some hooks are encapsulated.',
      'Except for onClose, all hooks are encapsulated.',
      /"some" where the source says "all"/,
    );
    await contradicts(
      'To accept more methods, the `addHttpMethod` may be used.',
      'To accept more methods, the `addHttpMethod` must be used.',
      /"may" where the source says "must"/,
    );
  });

  it('another product or format name contradicts, also one no dictionary has (pino / winston)', async () => {
    await contradicts(
      "As Fastify is focused on performance, it uses winston as its logger, with the default log level set to `'info'` when enabled.",
      "As Fastify is focused on performance, it uses pino as its logger, with the default log level set to `'info'` when enabled.",
      /winston/,
    );
    await contradicts('The default error format is the Joi one.', 'The default error format is the Ajv one.', /Joi/);
    await contradicts(
      'When schema validation fails for a request, Express will automatically return a status 400 response including the result from the validator in the payload.',
      'When schema validation fails for a request, Fastify will automatically return a status 400 response including the result from the validator in the payload.',
      /Express/,
    );
  });

  it('a word borrowed from the sentence before or after backs nothing', async () => {
    // "register" and "event" are in the sentence after the addHook one, "lost" too: no single sentence holds them all.
    const s = await one('Hooks are registered with the `fastify.addHook` method, and an event triggered before registration is lost.');
    assert.notEqual(s.verdict, 'supported');
  });

  it('copied sentences and rewordings that keep every checkable part are supported', async () => {
    for (const text of [
      'Logging is disabled by default.',
      'By default, Fastify adds an ID to every request for easier tracking.',
      'All hooks other than onClose are encapsulated.',
      'The `serializers` option is ignored by any logger other than Pino.',
      'The `addHttpMethod` must be used to accept more methods.',
      // The example: a shorter restatement of the span.
      'fastify-plugin breaks encapsulation.',
    ]) {
      const s = await one(text);
      assert.equal(s.verdict, 'supported', `${text}: ${s.reason ?? ''}`);
    }
  });

  it('lead-ins, requests and hedges are stripped before judging, never a way out', async () => {
    for (const text of [
      'Please note that logging is enabled by default.',
      'Note: Logging is enabled by default.',
      'ℹ️ Note: Logging is enabled by default.',
      'It is worth noting that logging is enabled by default.',
      'In fact, logging is enabled by default.',
      'We believe that logging is enabled by default.',
    ]) {
      const s = await one(text);
      assert.equal(s.verdict, 'contradicted', `${text}: ${s.verdict}`);
      assert.equal(s.support[0]!.quote, 'Logging is disabled by default.');
    }
    assert.equal((await one('Please note that logging is disabled by default.')).verdict, 'supported');
    assert.equal(stripLeadIns('Please note that, in fact, logging is off.'), 'logging is off.');
    assert.equal(stripLeadIns('Notes are kept for a year.'), 'Notes are kept for a year.');
  });

  it('a heading without end punctuation is its own unit: it neither backs nor hides the sentence under it', async () => {
    const text = 'Enable Logging\nLogging is enabled by default.';
    const [heading, sentence] = await checker.check({ text, retrieve });
    assert.equal(heading!.text, 'Enable Logging');
    assert.equal(heading!.verdict, 'not_factual');
    assert.equal(sentence!.text, 'Logging is enabled by default.');
    assert.equal(sentence!.verdict, 'contradicted');
  });
});

describe('the WordNet lexicon', () => {
  it('knows antonyms beyond a hand list, synonyms, and which words are no dictionary words', () => {
    for (const [a, b] of [
      ['enabled', 'disabled'],
      ['synchronous', 'asynchronous'],
      ['allow', 'deny'],
      ['increase', 'decrease'],
      ['accept', 'reject'],
      ['valid', 'invalid'],
      ['lowercase', 'uppercase'],
    ])
      assert.equal(areAntonyms(a!, b!), true, `${a} / ${b}`);
    assert.equal(areAntonyms('enabled', 'activated'), false);
    assert.equal(areSynonyms('answers', 'responds'), true);
    assert.equal(areSynonyms('enabled', 'disabled'), false);
    assert.equal(isDictionaryWord('logging'), true);
    assert.equal(isDictionaryWord('winston'), false);
  });
});
