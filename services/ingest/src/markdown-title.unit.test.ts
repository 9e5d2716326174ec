import assert from 'node:assert/strict';
import { test } from 'vitest';
import { markdownTitle } from './markdown-title.js';

test('the first Markdown heading names the file, past an HTML banner (the Fastify docs open every page with one)', () => {
  assert.equal(markdownTitle('<h1 align="center">Fastify</h1>\n\n## Hooks\n\nHooks are registered with ...'), 'Hooks');
  assert.equal(markdownTitle("<h1>Fastify</h1>\n\n# The hitchhiker's guide to plugins\nFirst of all"), "The hitchhiker's guide to plugins");
});

test('front matter title wins; quotes are dropped', () => {
  assert.equal(markdownTitle('---\nlayout: page\ntitle: "Getting started"\n---\n# Other\n'), 'Getting started');
});

test('setext headings, closing hashes and inline markup', () => {
  assert.equal(markdownTitle('Release notes\n=============\n\ntext'), 'Release notes');
  assert.equal(markdownTitle('## The `addHook` [method](./Hooks.md) ##\n'), 'The addHook method');
});

test('headings inside code fences do not count; no heading gives undefined', () => {
  assert.equal(markdownTitle('```sh\n# a comment\n```\n\n# Real title\n'), 'Real title');
  assert.equal(markdownTitle('Just a paragraph.\n\n- a list item\n---\n'), undefined);
  assert.equal(markdownTitle(''), undefined);
});
