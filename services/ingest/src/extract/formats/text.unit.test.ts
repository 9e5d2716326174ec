import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { extractMarkdown } from './text.js';

describe('Markdown (raw text intake)', () => {
  it('makes each list item a paragraph of its own, without its marker, with its continuation lines', () => {
    const blocks = extractMarkdown(
      '## Running costs\n\nA heat pump uses a third of the electricity.\n- Service the unit\n  every two years.\n- Keep the outdoor unit free of leaves.\n1. First step.\n2) Second step.\n',
    );
    assert.deepEqual(blocks, [
      { kind: 'heading', level: 2, text: 'Running costs' },
      { kind: 'paragraph', text: 'A heat pump uses a third of the electricity.' },
      { kind: 'paragraph', text: 'Service the unit every two years.' },
      { kind: 'paragraph', text: 'Keep the outdoor unit free of leaves.' },
      { kind: 'paragraph', text: 'First step.' },
      { kind: 'paragraph', text: 'Second step.' },
    ]);
  });

  it('leaves list markers inside code fences alone, and drops a thematic break', () => {
    assert.deepEqual(extractMarkdown('```\n- not an item\n```\n\n---\n\nText after a rule.'), [
      { kind: 'paragraph', text: '- not an item' },
      { kind: 'paragraph', text: 'Text after a rule.' },
    ]);
  });
});
