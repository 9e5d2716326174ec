import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { DraftRevision } from '@kb/events';
import { checkGate, withinScope } from './gate.js';
import { signWebhook } from './signing.js';
import { renderPage, renderSitemap, slugify } from './render.js';
import { closedConfig, destinationUrl } from '../destinations/config.js';
import { createSecretBox } from '../app/secrets.js';

const citation = {
  content_id: '00000000-0000-4000-8000-000000000001',
  version_id: '00000000-0000-4000-8000-000000000002',
  chunk_id: 'v:0',
  quote: '</script><b>q</b>',
};
const draft = (verdicts: string[], stale = false) =>
  ({
    draft_id: 'd',
    org_id: 'o',
    revision: 1,
    content_kind: 'article',
    title: 'Title <&>',
    description: 'Desc "quoted"',
    sections: [
      {
        section_id: 's',
        title: 'S',
        sentences: verdicts.map((verdict, index) => ({
          index,
          text: `Sentence ${index} <i>`,
          verdict,
          citations: verdict === 'supported' ? [citation] : [],
        })),
      },
    ],
    source_folder_ids: ['f1'],
    stale_sources: stale
      ? [{ content_id: citation.content_id, version_id: citation.version_id, reason: 'deleted', at: '2026-01-01T00:00:00Z' }]
      : [],
  }) as unknown as DraftRevision;

describe('the publish gate', () => {
  it('passes only when every factual sentence is supported and no source is stale', () => {
    assert.equal(checkGate(draft(['supported', 'not_factual'])).ok, true);
    const bad = checkGate(draft(['supported', 'unsupported', 'contradicted']));
    assert.equal(bad.ok, false);
    assert.deepEqual(
      bad.sentences.map((s) => [s.index, s.verdict]),
      [
        [1, 'unsupported'],
        [2, 'contradicted'],
      ],
    );
    assert.equal(checkGate(draft(['supported'], true)).ok, false);
  });

  it('keeps folder-scoped callers to drafts drawn only from their folders', () => {
    assert.equal(withinScope(draft([]), null), true);
    assert.equal(withinScope(draft([]), ['f1', 'f2']), true);
    assert.equal(withinScope(draft([]), ['f2']), false);
    assert.equal(withinScope({ ...draft([]), source_folder_ids: [] }, ['f1']), false);
  });

  it('folder scope covers sub-folders at any depth, never siblings or parents', () => {
    const parents: Record<string, string> = { child: 'f1', grandchild: 'child', sibling: 'root', f1: 'root' };
    const ancestors = (f: string) => {
      const chain: string[] = [];
      for (let p = parents[f]; p; p = parents[p]) chain.push(p);
      return chain;
    };
    const from = (...ids: string[]) => ({ ...draft([]), source_folder_ids: ids });
    assert.equal(withinScope(from('child'), ['f1'], ancestors), true);
    assert.equal(withinScope(from('grandchild', 'f1'), ['f1'], ancestors), true);
    assert.equal(withinScope(from('grandchild', 'sibling'), ['f1'], ancestors), false);
    assert.equal(withinScope(from('f1'), ['child'], ancestors), false, 'a parent is not inside its child');
    assert.equal(withinScope(from('child'), ['f1']), false, 'without the tree only exact ids match');
  });
});

describe('Standard Webhooks signatures', () => {
  it('sign "id.timestamp.body" with the decoded whsec_ secret', () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef');
    const secret = `whsec_${key.toString('base64')}`;
    const expected = createHmac('sha256', key).update('msg_1.1700000000.{"a":1}').digest('base64');
    assert.equal(signWebhook(secret, 'msg_1', 1700000000, '{"a":1}'), `v1,${expected}`);
    assert.notEqual(signWebhook(secret, 'msg_1', 1700000001, '{"a":1}'), `v1,${expected}`);
  });
});

describe('hosted rendering', () => {
  it('escapes text and keeps JSON-LD inside its script element', () => {
    const html = renderPage(
      { org_name: 'Acme', base_url: 'https://a.test' },
      { slug: 'p', title: 't', description: 'd', published_at: 'x', updated_at: 'y' },
      draft(['supported']),
    );
    assert.match(html, /<title>Title &lt;&amp;&gt;<\/title>/);
    assert.match(html, /Sentence 0 &lt;i&gt;/);
    assert.equal(html.split('</script>').length, 2, 'a quote cannot close the JSON-LD script');
    const ld = /<script type="application\/ld\+json">(.*)<\/script>/.exec(html)![1]!;
    assert.equal(JSON.parse(ld)['@graph'][0].citation[0].text, '</script><b>q</b>');
    assert.match(
      renderSitemap({ org_name: 'A', base_url: 'https://a.test' }, [
        { slug: 'a&b', title: '', description: '', published_at: '', updated_at: 'u' },
      ]),
      /<loc>https:\/\/a\.test\/a&amp;b<\/loc>/,
    );
  });

  it('slugifies titles', () => {
    assert.equal(slugify('Vitamin D: the Winter Months!'), 'vitamin-d-the-winter-months');
    assert.equal(slugify('Ünïcode café'), 'unicode-cafe');
    assert.equal(slugify('???'), 'piece');
  });
});

describe('destination config and secrets', () => {
  it('accept only the closed keys', () => {
    const fields = { url: { required: true, check: destinationUrl({ allowPrivate: false }), hint: 'a URL' } };
    assert.deepEqual(closedConfig({ url: 'https://x.test/h' }, fields), { url: 'https://x.test/h' });
    assert.throws(() => closedConfig({ url: 'https://x.test', other: 1 }, fields), /Unknown config key "other"/);
    assert.throws(() => closedConfig({}, fields), /config.url is required/);
    assert.throws(() => closedConfig({ url: 'ftp://x' }, fields), /config.url: must be an http\(s\) URL/);
    assert.throws(
      () => closedConfig({ url: 'http://10.0.0.8/' }, fields),
      /config.url: 10.0.0.8 is a private .*ALLOW_PRIVATE_DESTINATIONS=true/,
    );
    assert.throws(() => closedConfig({ url: 'https://a:b@x.test/' }, fields), /config.url: must not carry a user name or password/);
  });

  it('seal secrets so that only the same key opens them', () => {
    const box = createSecretBox('key one of some length');
    const sealed = box.seal('application password');
    assert.doesNotMatch(sealed, /application/);
    assert.equal(box.open(sealed), 'application password');
    assert.throws(() => createSecretBox('another key of some length').open(sealed));
  });
});
