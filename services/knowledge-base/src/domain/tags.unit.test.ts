import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { AppError } from '@kb/platform';
import { tagDecider } from './tag.js';
import { taggingDecider } from './tagging.js';
import { ruleMatches, tagRuleDecider } from './tag-rule.js';

const ORG = '11111111-1111-4111-8111-111111111111';
const AT = '2026-01-01T00:00:00.000Z';
const kindOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err.kind;
  }
};

describe('tag decider', () => {
  it('trims names and checks colors', () => {
    const [e] = tagDecider.decide(
      { type: 'create', tag_id: 't', org_id: ORG, name: ' Go ', color: '#a1B2c3', at: AT },
      tagDecider.initialState(),
    );
    assert.deepEqual(e!.data, { tag_id: 't', org_id: ORG, name: 'Go', color: '#a1B2c3', at: AT });
    assert.equal(
      kindOf(() => tagDecider.decide({ type: 'create', tag_id: 't', org_id: ORG, name: ' ', at: AT }, tagDecider.initialState())),
      'validation',
    );
    assert.equal(
      kindOf(() =>
        tagDecider.decide({ type: 'create', tag_id: 't', org_id: ORG, name: 'ok', color: 'red', at: AT }, tagDecider.initialState()),
      ),
      'validation',
    );
  });

  it('is not_found for another organization', () => {
    const state = { status: 'live' as const, tag_id: 't', org_id: ORG, name: 'x' };
    assert.equal(
      kindOf(() => tagDecider.decide({ type: 'delete', org_id: 'other', at: AT }, state)),
      'not_found',
    );
  });
});

describe('tagging decider', () => {
  const base = { org_id: ORG, target_type: 'content' as const, target_id: 'c', origin: 'rule' as const, at: AT };
  it('adds without duplicates and decides nothing when the set is unchanged', () => {
    const [e] = taggingDecider.decide({ type: 'add', ...base, tag_ids: ['b', 'c', 'b'] }, { tag_ids: ['a', 'b'] });
    assert.deepEqual((e!.data as { tag_ids: string[] }).tag_ids, ['a', 'b', 'c']);
    assert.deepEqual(taggingDecider.decide({ type: 'add', ...base, tag_ids: ['a'] }, { tag_ids: ['a', 'b'] }), []);
  });

  it('replaces the set, including with nothing', () => {
    const [e] = taggingDecider.decide({ type: 'set', ...base, tag_ids: [] }, { tag_ids: ['a'] });
    assert.deepEqual((e!.data as { tag_ids: string[] }).tag_ids, []);
    assert.deepEqual(taggingDecider.decide({ type: 'set', ...base, tag_ids: ['b', 'a'] }, { tag_ids: ['a', 'b'] }), []);
  });
});

describe('tag rules', () => {
  const facts = { folder_chain: ['sub', 'docs', 'root'], format: 'pdf', source_kind: 'file' as const };
  it('match when every condition present matches', () => {
    assert.equal(ruleMatches({ folder_id: 'docs' }, facts), true, 'a folder rule covers the subtree');
    assert.equal(ruleMatches({ folder_id: 'docs', format: 'pdf', source_kind: 'file' }, facts), true);
    assert.equal(ruleMatches({ folder_id: 'docs', format: 'docx' }, facts), false);
    assert.equal(ruleMatches({ source_kind: 'raw' }, facts), false);
    assert.equal(ruleMatches({ folder_id: 'other' }, facts), false);
  });

  it('need at least one condition and valid values; formats are stored lower-case', () => {
    const create = (extra: Record<string, unknown>) => () =>
      tagRuleDecider.decide({ type: 'create', rule_id: 'r', org_id: ORG, tag_id: 't', at: AT, ...extra }, tagRuleDecider.initialState());
    assert.equal(kindOf(create({})), 'validation');
    assert.equal(kindOf(create({ source_kind: 'mail' })), 'validation');
    assert.equal(kindOf(create({ format: '.pdf' })), 'validation');
    assert.equal((create({ format: 'PDF' })()[0]!.data as { format: string }).format, 'pdf');
  });
});
