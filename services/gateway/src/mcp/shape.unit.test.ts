import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { fit, RESULT_CAP, shapeResult } from './shape.js';
import { tidySchema, undescribed } from './tool-schema.js';

describe('MCP result shaping', () => {
  it('fit drops trailing items of the largest list and cuts the longest text until the JSON fits', () => {
    const value = { items: Array.from({ length: 50 }, (_, i) => ({ id: i, text: 'x'.repeat(500) })), note: 'y'.repeat(5000) };
    const { value: cut, cuts } = fit(value, 10_000);
    assert.ok(JSON.stringify(cut).length <= 10_000);
    const items = cuts.find((c) => c.path === 'items')!;
    assert.equal(items.total, 50);
    assert.equal(items.kept, (cut.items as unknown[]).length);
    assert.deepEqual(
      (cut.items as { id: number }[]).map((i) => i.id),
      Array.from({ length: items.kept }, (_, i) => i),
      'the first items kept',
    );
    assert.equal(value.items.length, 50, 'the input is left as it was');
  });

  it('a cut list says how to read on with offset, a paged text with start_index', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ id: i, text: 'z'.repeat(400) }));
    const shaped = shapeResult(
      { items },
      { list: 'items' },
      { args: { offset: 10 }, takesOffset: true, toolName: 'list_x', totalCount: 500 },
    );
    assert.ok(JSON.stringify(shaped.structured).length + shaped.note!.length <= RESULT_CAP);
    const kept = (shaped.structured.items as unknown[]).length;
    assert.equal(shaped.structured.next_offset, 10 + kept);
    assert.match(shaped.note!, new RegExp(`items holds ${kept} of 100 items.*call list_x again with offset: ${10 + kept}`));

    const text = 'a'.repeat(25_000);
    const paged = shapeResult({ body: text }, { pagedText: 'body' }, { args: { start_index: 5 }, takesOffset: false, toolName: 'get_x' });
    assert.equal(paged.structured.body, text.slice(5, 10_005));
    assert.equal(paged.structured.body_length, 25_000);
    assert.equal(paged.structured.next_start_index, 10_005);
    assert.equal(paged.note, undefined);
  });

  it('summaries unless detail is full; renames in the result and its items', () => {
    const shaping = {
      list: 'items',
      rename: { geo_question_id: 'prompt_id' },
      summarizeItem: (o: Record<string, unknown>) => ({ prompt_id: o.prompt_id }),
    };
    const ctx = { takesOffset: true, toolName: 't' };
    const body = { items: [{ geo_question_id: 'p', other: 1 }] };
    assert.deepEqual(shapeResult(body, shaping, { ...ctx, args: {} }).structured.items, [{ prompt_id: 'p' }]);
    assert.deepEqual(shapeResult(body, shaping, { ...ctx, args: { detail: 'full' } }).structured.items, [{ prompt_id: 'p', other: 1 }]);
  });
});

describe('MCP input schemas', () => {
  it('unions of constants become enums, forbidden fields go, shared descriptions fill the gaps', () => {
    const tidy = tidySchema({
      type: 'object',
      properties: {
        order: {
          anyOf: [
            { const: 'asc', type: 'string' },
            { const: 'desc', type: 'string' },
          ],
        },
        sort: { not: {} },
        offset: { type: 'integer', minimum: 0, maximum: 2147483647 },
        mystery: { type: 'string' },
      },
      required: ['sort', 'order'],
    }) as { properties: Record<string, Record<string, unknown>>; required: string[] };
    assert.deepEqual(tidy.properties.order, { type: 'string', enum: ['asc', 'desc'], description: 'sort direction' });
    assert.equal(tidy.properties.sort, undefined);
    assert.deepEqual(tidy.required, ['order']);
    assert.equal(tidy.properties.offset!.maximum, undefined);
    assert.deepEqual(undescribed(tidy as never), ['mystery']);
  });
});
