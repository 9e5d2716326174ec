import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_LIMITS } from '../types.js';

// The engine's own, taken before anything in this file loads pdf.js (each test file runs in a process of its own).
const engine = { push: Array.prototype.push, parse: JSON.parse, toString: Function.prototype.toString };
const sample = readFileSync(fileURLToPath(new URL('../../../../../test/fixtures/formats/sample.pdf', import.meta.url)));

const unchanged = () => {
  assert.equal(Array.prototype.push, engine.push, 'Array.prototype.push');
  assert.equal(JSON.parse, engine.parse, 'JSON.parse');
  assert.equal(Function.prototype.toString, engine.toString, 'Function.prototype.toString');
};

describe("the PDF extractor keeps the engine's built-ins (pdf.js's legacy build replaces them)", () => {
  it('once loaded, and after its first document (when pdf.js would load its worker code)', async () => {
    const { extractPdf } = await import('./pdf.js');
    unchanged();
    const blocks = await extractPdf(sample, DEFAULT_LIMITS);
    assert.ok(blocks.some((b) => b.text.length > 0));
    unchanged();
    // What pdf.js added, which Node 20 lacks and it needs, stays.
    assert.equal(typeof (Promise as { withResolvers?: unknown }).withResolvers, 'function');
  });
});
