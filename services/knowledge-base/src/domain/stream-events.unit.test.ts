import { describe, expectTypeOf, it } from 'vitest';
import { categoryDecider } from './category.js';
import { kbNodeDecider } from './kb-node.js';
import { promptDecider } from './prompt.js';
import { tagRuleDecider } from './tag-rule.js';
import { tagDecider } from './tag.js';
import { taggingDecider } from './tagging.js';

/**
 * Type-level checks (they fail at compile time, in `npm run typecheck`): each
 * stream's decider narrows `event.data` by `event.type`, so a field renamed in
 * the catalogue breaks the code that reads it instead of reading undefined.
 */

type StreamEvent<D extends { evolve: (...args: any[]) => unknown }> = Parameters<D['evolve']>[1];

describe('knowledge-base stream events (type-level)', () => {
  it('category: category.created carries name', () => {
    const read = (e: StreamEvent<typeof categoryDecider>) => {
      if (e.type !== 'category.created') return;
      expectTypeOf(e.data.name).toEqualTypeOf<string>();
      // @ts-expect-error a field category.created does not have
      void e.data.name_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('kb node: kb_node.moved carries parent_id', () => {
    const read = (e: StreamEvent<typeof kbNodeDecider>) => {
      if (e.type !== 'kb_node.moved') return;
      expectTypeOf(e.data.parent_id).toEqualTypeOf<string>();
      // @ts-expect-error a field kb_node.moved does not have
      void e.data.parent_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('prompt: prompt.created carries text', () => {
    const read = (e: StreamEvent<typeof promptDecider>) => {
      if (e.type !== 'prompt.created') return;
      expectTypeOf(e.data.text).toEqualTypeOf<string>();
      // @ts-expect-error a field prompt.created does not have
      void e.data.text_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('tag: tag.created carries color', () => {
    const read = (e: StreamEvent<typeof tagDecider>) => {
      if (e.type !== 'tag.created') return;
      expectTypeOf(e.data.color).toEqualTypeOf<string | undefined>();
      // @ts-expect-error a field tag.created does not have
      void e.data.color_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('tag rule: tag_rule.created carries tag_id', () => {
    const read = (e: StreamEvent<typeof tagRuleDecider>) => {
      if (e.type !== 'tag_rule.created') return;
      expectTypeOf(e.data.tag_id).toEqualTypeOf<string>();
      // @ts-expect-error a field tag_rule.created does not have
      void e.data.tag_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('tagging: tags.set carries tag_ids', () => {
    const read = (e: StreamEvent<typeof taggingDecider>) => {
      if (e.type !== 'tags.set') return;
      expectTypeOf(e.data.tag_ids).toEqualTypeOf<string[]>();
      // @ts-expect-error a field tags.set does not have
      void e.data.tag_ids_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
});
