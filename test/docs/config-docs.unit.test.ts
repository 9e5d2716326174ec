import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BEGIN_MARKER, CONFIG_PAGE, CONFIG_SOURCES, configRows, renderConfigTable, withCurrentTable } from './config-docs.js';

describe('docs/configuration.md', () => {
  it('holds the table generated from the configuration schemas as they are now (npm run docs:config)', async () => {
    const page = readFileSync(CONFIG_PAGE, 'utf8');
    const current = await withCurrentTable(page);
    assert.ok(current === page, 'docs/configuration.md is stale: run `npm run docs:config` and commit the result');
  });

  it('names every variable of every schema, with its default', async () => {
    const table = await renderConfigTable();
    for (const { services, schema } of CONFIG_SOURCES) {
      for (const [variable, field] of Object.entries(schema.properties)) {
        assert.match(table, new RegExp(`^\\| \`${variable}\` `, 'm'), `${variable} of ${services}`);
        const fieldDefault = (field as { default?: unknown }).default;
        if (fieldDefault === undefined) continue;
        const row = configRows().find((r) => r.variable === variable && r.services.includes(services));
        assert.equal(row?.defaultValue, String(fieldDefault), `default of ${variable} in ${services}`);
      }
    }
  });

  it('sees a changed schema: a page made from other schemas is stale', async () => {
    const page = readFileSync(CONFIG_PAGE, 'utf8');
    const begin = page.indexOf(BEGIN_MARKER) + BEGIN_MARKER.length;
    const tampered = page.slice(0, begin) + page.slice(begin).replace(/`8080`/, '`8081`');
    assert.notEqual(tampered, page);
    assert.notEqual(await withCurrentTable(tampered), tampered);
  });
});
