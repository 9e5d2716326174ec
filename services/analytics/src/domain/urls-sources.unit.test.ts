import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { normalizeHost, normalizeUrl, registrableDomain } from './urls.js';
import { normalizePattern, tierOf, winningRule, type MatchType, type SourceRule, type TierName } from './sources.js';

describe('normalizeUrl', () => {
  it('drops scheme, www., default port, fragment, tracking parameters and trailing slash; sorts the query', () => {
    const cases: [string, string][] = [
      ['https://www.Example.com/Blog/', 'example.com/Blog'],
      ['http://example.com:80/blog?utm_source=x&utm_medium=y#top', 'example.com/blog'],
      ['https://example.com/p?b=2&a=1&gclid=z&fbclid=q', 'example.com/p?a=1&b=2'],
      ['example.com', 'example.com'],
      ['https://sub.example.com/a%20b', 'sub.example.com/a b'],
    ];
    for (const [raw, key] of cases) assert.equal(normalizeUrl(raw)?.key, key, raw);
  });
  it('rejects what is not an http(s) URL with a dotted host', () => {
    for (const raw of ['ftp://example.com/x', 'mailto:a@b.c', 'not a url', 'http://nohost/x', ''])
      assert.equal(normalizeUrl(raw), null, raw);
  });
  it('a host is a URL without path or query', () => {
    assert.equal(normalizeHost('https://www.acme.com/'), 'acme.com');
    assert.equal(normalizeHost('acme.com/blog'), null);
  });
});

describe('tier rules and their precedence', () => {
  let seq = 0;
  const rule = (match_type: MatchType, pattern: string, tier: TierName): SourceRule => ({
    source_id: `r${seq}`,
    match_type,
    pattern: normalizePattern(match_type, pattern),
    tier,
    seq: seq++,
  });
  const url = (raw: string) => normalizeUrl(raw)!;

  it('domain matches the host and subdomains; host matches exactly; path_prefix at a segment boundary', () => {
    const rules = [
      rule('domain', 'acme.com', 'primary'),
      rule('host', 'blog.other.com', 'tracked'),
      rule('path_prefix', 'other.com/docs', 'tracked'),
    ];
    assert.equal(tierOf(rules, url('https://docs.acme.com/x')), 'primary');
    assert.equal(tierOf(rules, url('https://notacme.com/x')), 'secondary');
    assert.equal(tierOf(rules, url('https://blog.other.com/a')), 'tracked');
    assert.equal(tierOf(rules, url('https://x.blog.other.com/a')), 'secondary');
    assert.equal(tierOf(rules, url('https://other.com/docs')), 'tracked');
    assert.equal(tierOf(rules, url('https://other.com/docs/a/b')), 'tracked');
    assert.equal(tierOf(rules, url('https://other.com/docsearch')), 'secondary');
  });

  it('the most specific rule wins: exact_url > longer path_prefix > path_prefix > host > longer domain > domain', () => {
    const domain = rule('domain', 'acme.com', 'primary');
    const subdomain = rule('domain', 'shop.acme.com', 'secondary');
    const host = rule('host', 'shop.acme.com', 'tracked');
    const prefix = rule('path_prefix', 'shop.acme.com/a', 'secondary');
    const longer = rule('path_prefix', 'shop.acme.com/a/b', 'primary');
    const exact = rule('exact_url', 'https://shop.acme.com/a/b/c?utm_source=x', 'tracked');
    const all = [exact, longer, prefix, host, subdomain, domain];
    const winner = (raw: string) => winningRule(all, url(raw))?.source_id;
    assert.equal(winner('https://shop.acme.com/a/b/c'), exact.source_id);
    assert.equal(winner('https://shop.acme.com/a/b/d'), longer.source_id);
    assert.equal(winner('https://shop.acme.com/a/x'), prefix.source_id);
    assert.equal(winner('https://shop.acme.com/z'), host.source_id);
    assert.equal(winner('https://eu.shop.acme.com/z'), subdomain.source_id);
    assert.equal(winner('https://acme.com/z'), domain.source_id);
  });

  it('equal specificity: the higher tier, then the older rule', () => {
    const older = rule('domain', 'acme.com', 'tracked');
    const primary = rule('domain', 'acme.com', 'primary');
    const newer = rule('domain', 'acme.com', 'primary');
    assert.equal(winningRule([newer, older, primary], url('acme.com/x'))?.source_id, primary.source_id);
  });

  it('rejects patterns that cannot match (400)', () => {
    assert.throws(() => normalizePattern('domain', 'acme.com/path'), /not a valid domain/);
    assert.throws(() => normalizePattern('exact_url', 'ftp://x.com'), /not a valid exact_url/);
  });
});

describe('rule 2 and the precedence, for random rules and URLs (fast-check)', () => {
  const HOSTS = ['acme.com', 'docs.acme.com', 'a.docs.acme.com', 'globex.com'];
  const PATHS = ['', '/blog', '/blog/post', '/blog/post/2', '/docs'];
  const TIER_LIST: TierName[] = ['primary', 'tracked', 'secondary'];
  const ruleArb = fc.record({
    match_type: fc.constantFrom<MatchType>('domain', 'host', 'path_prefix', 'exact_url'),
    host: fc.constantFrom(...HOSTS),
    path: fc.constantFrom(...PATHS),
    tier: fc.constantFrom(...TIER_LIST),
  });
  const urlArb = fc.record({ host: fc.constantFrom(...HOSTS), path: fc.constantFrom(...PATHS) });
  /** Spellings of one page that normalisation must treat as the same URL. */
  const spell = (host: string, path: string, variant: number) =>
    [`https://${host}${path}`, `http://www.${host}${path}/`, `HTTPS://${host.toUpperCase()}${path}?utm_source=ai#top`][variant]!;

  it('every URL gets exactly the tier of the most specific matching rule, whatever its spelling', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 8 }), urlArb, fc.nat({ max: 2 }), (specs, url, variant) => {
        const rules: SourceRule[] = specs.map((r, seq) => ({
          source_id: String(seq),
          match_type: r.match_type,
          pattern: normalizePattern(r.match_type, r.match_type === 'domain' || r.match_type === 'host' ? r.host : `${r.host}${r.path}`),
          tier: r.tier,
          seq,
        }));
        const n = normalizeUrl(spell(url.host, url.path, variant))!;
        assert.equal(n.key, `${url.host}${url.path}`);
        // The oracle, straight from the glossary: which rules match, then the most specific.
        const page = `${url.host}${url.path}`;
        const matching = specs
          .map((r, seq) => ({ ...r, seq }))
          .filter((r) =>
            r.match_type === 'exact_url'
              ? `${r.host}${r.path}` === page
              : r.match_type === 'path_prefix'
                ? r.host === url.host && (url.path === r.path || url.path.startsWith(`${r.path}/`))
                : r.match_type === 'host'
                  ? r.host === url.host
                  : url.host === r.host || url.host.endsWith(`.${r.host}`),
          );
        const klass = { exact_url: 4, path_prefix: 3, host: 2, domain: 1 } as const;
        const rank = { primary: 3, tracked: 2, secondary: 1 } as const;
        const patternLength = (r: (typeof matching)[number]) =>
          r.match_type === 'path_prefix' ? r.path.length : r.match_type === 'domain' ? r.host.length : 0;
        matching.sort(
          (a, b) =>
            klass[b.match_type] - klass[a.match_type] ||
            patternLength(b) - patternLength(a) ||
            rank[b.tier] - rank[a.tier] ||
            a.seq - b.seq,
        );
        const tier = tierOf(rules, n);
        assert.ok(TIER_LIST.includes(tier));
        assert.equal(tier, matching[0]?.tier ?? 'secondary');
        assert.equal(winningRule(rules, n)?.source_id, matching[0] ? String(matching[0].seq) : undefined);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('registrableDomain', () => {
  it('rolls a host up by the public suffix list; a host without one is its own', () => {
    assert.equal(registrableDomain('docs.example.com'), 'example.com');
    assert.equal(registrableDomain('example.com'), 'example.com');
    assert.equal(registrableDomain('news.example.co.uk'), 'example.co.uk');
    assert.equal(registrableDomain('a.b.example.com.au'), 'example.com.au');
    assert.equal(registrableDomain('someone.github.io'), 'someone.github.io');
    assert.equal(registrableDomain('localhost'), 'localhost');
    assert.equal(registrableDomain('127.0.0.1'), '127.0.0.1');
  });
});
