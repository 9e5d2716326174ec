import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import type { TObject, TSchema } from '@sinclair/typebox';
import { heapConfigSpec } from '@kb/platform';
import { gatewayConfigSpec } from '@kb/gateway';
import { ingestConfigSpec } from '@kb/ingest';
import { knowledgeBaseConfigSpec } from '@kb/knowledge-base';
import { analyticsConfigSpec } from '@kb/analytics';
import { generationConfigSpec } from '@kb/generation';
import { publishingConfigSpec } from '@kb/publishing';
import { mcpConfigSpec } from '@kb/mcp';

/**
 * The configuration table of docs/configuration.md, generated from the services' configuration
 * schemas (the TypeBox objects their entry points load), so the page cannot name a variable,
 * default or allowed value the code does not have. `npm run docs:config` rewrites the table;
 * config-docs.unit.test.ts fails when the page holds anything else.
 */

export const CONFIG_PAGE = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));
export const BEGIN_MARKER = '<!-- BEGIN GENERATED: configuration table (npm run docs:config) -->';
export const END_MARKER = '<!-- END GENERATED: configuration table -->';

/** Every process that reads a schema, in the order the table names them. */
export const CONFIG_SOURCES: readonly { services: string; schema: TObject }[] = [
  { services: 'gateway', schema: gatewayConfigSpec.schema },
  { services: 'ingest', schema: ingestConfigSpec.schema },
  { services: 'knowledge-base', schema: knowledgeBaseConfigSpec.schema },
  { services: 'analytics', schema: analyticsConfigSpec.schema },
  { services: 'generation', schema: generationConfigSpec.schema },
  { services: 'publishing', schema: publishingConfigSpec.schema },
  { services: 'mcp', schema: mcpConfigSpec.schema },
];
/** The heap settings are read once per process, by every entry point (`applyHeapSettings`). */
const EVERY_PROCESS = { label: 'every process', schema: heapConfigSpec.schema };

interface Field extends Record<string, unknown> {
  type?: string;
  default?: unknown;
  description?: string;
  anyOf?: Field[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
}

export interface ConfigRow {
  variable: string;
  services: string[];
  required: boolean;
  defaultValue: string;
  values: string;
  description: string;
}

const OPTIONAL = Symbol.for('TypeBox.Optional');

const KNOWN_PATTERNS: Record<string, string> = {
  '^https?://': 'http(s) URL',
  '^https?://[^\\s]+$': 'http(s) URL',
  '^rediss?://': 'redis:// or rediss:// URL',
  '^mongodb(\\+srv)?://': 'mongodb:// URL',
  '^[^\\s:]+:\\d+$': 'host:port',
  '^[^,\\s]+(,[^,\\s]+)*$': 'comma-separated list',
  '^[^\\s,]+(,[^\\s,]+)*$': 'comma-separated list',
};

/** What a value may be, in words: choices, a range, or the kind of text. */
function valuesOf(field: Field): string {
  if (field.anyOf) return field.anyOf.map((f) => `\`${String(f.const)}\``).join(', ');
  if (field.type === 'boolean') return '`true`, `false`';
  if (field.type === 'integer' || field.type === 'number') {
    const kind = field.type === 'integer' ? 'integer' : 'number';
    if (field.minimum !== undefined && field.maximum !== undefined) return `${kind} ${field.minimum} to ${field.maximum}`;
    if (field.minimum !== undefined) return `${kind} ≥ ${field.minimum}`;
    return kind;
  }
  if (field.pattern !== undefined) return KNOWN_PATTERNS[field.pattern] ?? `text matching \`${field.pattern}\``;
  if (field.minLength !== undefined && field.minLength > 1) return `text, ${field.minLength}+ characters`;
  return 'text';
}

function rowOf(variable: string, field: Field, services: string[]): ConfigRow {
  const optional = (field as Record<symbol, unknown>)[OPTIONAL] === 'Optional';
  return {
    variable,
    services,
    required: !optional && field.default === undefined,
    defaultValue: field.default === undefined ? '' : String(field.default),
    values: valuesOf(field),
    description: (field.description ?? '').replace(/\s+/g, ' ').trim(),
  };
}

/** One row per variable and definition: a variable defined alike by several services is one row naming them all. */
export function configRows(): ConfigRow[] {
  const rows = new Map<string, ConfigRow>();
  const add = (schema: TObject, service: string) => {
    for (const [variable, field] of Object.entries(schema.properties) as [string, TSchema][]) {
      const row = rowOf(variable, field as Field, [service]);
      const key = JSON.stringify({ ...row, services: [] });
      const seen = rows.get(key);
      if (seen) seen.services.push(service);
      else rows.set(key, row);
    }
  };
  add(EVERY_PROCESS.schema, EVERY_PROCESS.label);
  for (const source of CONFIG_SOURCES) add(source.schema, source.services);
  return [...rows.values()].sort((a, b) => a.variable.localeCompare(b.variable) || a.services[0]!.localeCompare(b.services[0]!));
}

const cell = (text: string) => text.replace(/\|/g, '\\|');
const code = (text: string) => (text === '' ? '' : `\`${text.replace(/`/g, '')}\``);

function servicesOf(row: ConfigRow): string {
  const all = CONFIG_SOURCES.map((s) => s.services);
  if (all.every((s) => row.services.includes(s))) return 'every service';
  return row.services.join(', ');
}

/** The Markdown table, formatted as Prettier formats it (the page is checked by `prettier --check`). */
export async function renderConfigTable(): Promise<string> {
  const lines = [
    '| Variable | Read by | Default | Values | Meaning |',
    '| --- | --- | --- | --- | --- |',
    ...configRows().map((row) =>
      [
        '',
        code(row.variable),
        servicesOf(row),
        row.required ? '**required**' : cell(code(row.defaultValue)),
        cell(row.values),
        cell(row.description),
        '',
      ]
        .join(' | ')
        .trim(),
    ),
  ];
  const options = (await prettier.resolveConfig(CONFIG_PAGE)) ?? {};
  return (await prettier.format(lines.join('\n'), { ...options, parser: 'markdown' })).trimEnd();
}

/** The page with its generated block replaced by the current table. */
export async function withCurrentTable(page: string): Promise<string> {
  const begin = page.indexOf(BEGIN_MARKER);
  const end = page.indexOf(END_MARKER);
  if (begin < 0 || end < begin) throw new Error(`${CONFIG_PAGE} must hold ${BEGIN_MARKER} ... ${END_MARKER}`);
  return `${page.slice(0, begin + BEGIN_MARKER.length)}\n\n${await renderConfigTable()}\n\n${page.slice(end)}`;
}

/** Rewrites the page; returns whether it changed. */
export async function updateConfigPage(path = CONFIG_PAGE): Promise<boolean> {
  const page = readFileSync(path, 'utf8');
  const next = await withCurrentTable(page);
  if (next !== page) writeFileSync(path, next);
  return next !== page;
}
