import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as oracle from './fold-oracle.test.js';
import { normalizeUrl, registrableDomain } from './urls.js';

/**
 * The fold's fast paths (memos, compiled names, fewer allocations) against the
 * implementations they replaced (fold-oracle.test.ts), on random inputs: equal
 * results, on the first call (computed) and the second (remembered).
 */

const hostArb = fc.oneof(
  fc.constantFrom(
    'example.com',
    'www.Example.com',
    'docs.example.co.uk',
    'a.b.github.io',
    'localhost',
    '127.0.0.1',
    'nohost',
    'EXAMPLE.com.',
  ),
  fc.domain(),
);
const pathArb = fc.oneof(fc.constantFrom('', '/', '/blog/', '/a%20b', '/%E0%A4%A', '/x//', '/Blog/Post'), fc.webPath());
const queryArb = fc.oneof(
  fc.constantFrom('', '?b=2&a=1', '?utm_source=x&id=3', '?gclid=z', '?REF=1&x', '?a=1&a=0'),
  fc.webQueryParameters().map((q) => `?${q}`),
);
/** URL spellings as answers cite them, with schemes, ports, fragments and garbage mixed in. */
const rawUrlArb = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('https://', 'http://', 'HTTP://', '', 'ftp://', 'mailto:', 'https://user:pw@', ' https://'),
      hostArb,
      fc.constantFrom('', ':80', ':443', ':8080'),
      pathArb,
      queryArb,
      fc.constantFrom('', '#top', ' '),
    )
    .map((parts) => parts.join('')),
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.string({ maxLength: 30 }),
);

describe('normalizeUrl and registrableDomain (memoised) against the oracle (fast-check)', () => {
  it('equal results for every spelling, computed and remembered', () => {
    fc.assert(
      fc.property(rawUrlArb, (raw) => {
        const expected = oracle.normalizeUrl(raw);
        assert.deepEqual(normalizeUrl(raw), expected);
        assert.deepEqual(normalizeUrl(raw), expected);
        if (expected) {
          assert.equal(registrableDomain(expected.host), oracle.registrableDomain(expected.host));
          assert.equal(registrableDomain(expected.host), oracle.registrableDomain(expected.host));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('a remembered result cannot be changed by a caller', () => {
    const url = normalizeUrl('https://example.com/frozen')!;
    assert.throws(() => {
      (url as { key: string }).key = 'other';
    }, TypeError);
    assert.equal(normalizeUrl('https://example.com/frozen')!.key, 'example.com/frozen');
  });

  it('a URL longer than the memo takes is still normalised', () => {
    const raw = `https://example.com/${'a'.repeat(2000)}?utm_source=x`;
    assert.deepEqual(normalizeUrl(raw), oracle.normalizeUrl(raw));
  });
});
