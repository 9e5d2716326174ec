import { useId, useState } from 'preact/hooks';

/**
 * Form fields generated from the JSON Schema the API publishes for a body (its
 * OpenAPI document), so the console offers exactly the closed key set the API
 * accepts: text and numbers as inputs, choices (a union of constants) as a
 * select, booleans as a yes/no choice, lists of text one per line, nested objects
 * as a group, lists of objects (sections, preferred terms) as a group per entry
 * that can be added and removed, and anything else as JSON. `SchemaEditor` adds a
 * JSON view of the whole object. Values are read back with `readSchemaForm`.
 */
export interface JsonSchema {
  type?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  $ref?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

export type Components = Record<string, JsonSchema>;

const resolve = (s: JsonSchema, components: Components): JsonSchema =>
  s.$ref ? (components[s.$ref.replace(/^#\/components\/schemas\//, '')] ?? {}) : s;

/** The constants a schema allows, when it is a choice among them. */
export const choicesOf = (s: JsonSchema): string[] | undefined => {
  if (s.enum) return s.enum.map(String);
  // A union of constants, as `const` or as one-value `enum`s (how OpenAPI documents write them).
  if (s.anyOf && s.anyOf.every((a) => a.const !== undefined || a.enum?.length === 1))
    return s.anyOf.map((a) => String(a.const ?? a.enum![0]));
  return undefined;
};

/** A key as a label: `dont_rules` reads "Don't rules", `instead_of` "Instead of". */
export const labelOf = (key: string) =>
  key
    .replace(/_/g, ' ')
    .replace(/\b(dont|doesnt|isnt|cant|wont)\b/g, (w) => `${w.slice(0, -1)}'${w.slice(-1)}`)
    .replace(/^\w/, (c) => c.toUpperCase());

/** One entry of a list of objects, in words: "section", "preferred term". */
const entryLabelOf = (key: string) => labelOf(key).toLowerCase().replace(/ies$/, 'y').replace(/s$/, '');

type Kind = 'choice' | 'boolean' | 'number' | 'text' | 'lines' | 'object' | 'list' | 'json';
function kindOf(s: JsonSchema, components: Components): Kind {
  if (choicesOf(s)) return 'choice';
  if (s.type === 'boolean') return 'boolean';
  if (s.type === 'integer' || s.type === 'number') return 'number';
  if (s.type === 'string') return 'text';
  if (s.type === 'array' && s.items?.type === 'string' && !choicesOf(s.items)) return 'lines';
  if (s.type === 'array' && s.items && resolve(s.items, components).properties) return 'list';
  if (s.type === 'object' && s.properties) return 'object';
  return 'json';
}

/**
 * Selects the given option once, when the select is first attached. The fields are not
 * controlled (what the user chose stays through re-renders), so the value is set only once.
 */
const initialChoice = (value: string) => (el: HTMLSelectElement | null) => {
  if (!el || el.dataset.initialized) return;
  el.value = value;
  el.dataset.initialized = 'true';
};

export function SchemaFields({
  schema,
  components,
  value,
  prefix = '',
}: {
  schema: JsonSchema;
  components: Components;
  value: Record<string, unknown> | undefined;
  prefix?: string;
}) {
  const base = useId();
  const props = resolve(schema, components).properties ?? {};
  return (
    <div class="schema-form">
      {Object.entries(props).map(([key, raw]) => {
        const s = resolve(raw, components);
        const name = `${prefix}${key}`;
        const id = `${base}-${name}`;
        const current = value?.[key];
        const kind = kindOf(s, components);
        const hint = s.description ? <small class="hint">{s.description}</small> : null;
        if (kind === 'list')
          return (
            <ObjectList
              key={key}
              name={name}
              label={labelOf(key)}
              entry={entryLabelOf(key)}
              schema={s}
              components={components}
              value={Array.isArray(current) ? (current as Record<string, unknown>[]) : undefined}
            />
          );
        if (kind === 'object')
          return (
            <fieldset key={key}>
              <legend>{labelOf(key)}</legend>
              <SchemaFields schema={s} components={components} value={current as Record<string, unknown>} prefix={`${name}.`} />
            </fieldset>
          );
        return (
          <div class="field" key={key}>
            <label for={id}>{labelOf(key)}</label>
            {kind === 'choice' ? (
              <select id={id} name={name} data-kind={kind} ref={initialChoice(current === undefined ? '' : String(current))}>
                <option value="">(default)</option>
                {choicesOf(s)!.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : kind === 'boolean' ? (
              <select id={id} name={name} data-kind={kind} ref={initialChoice(typeof current === 'boolean' ? String(current) : '')}>
                <option value="">(default)</option>
                <option value="true">yes</option>
                <option value="false">no</option>
              </select>
            ) : kind === 'number' ? (
              <input
                id={id}
                name={name}
                data-kind={kind}
                type="number"
                min={s.minimum}
                max={s.maximum}
                defaultValue={current === undefined ? '' : String(current)}
              />
            ) : kind === 'text' ? (
              <input id={id} name={name} data-kind={kind} maxLength={s.maxLength} defaultValue={(current as string) ?? ''} />
            ) : (
              <textarea
                id={id}
                name={name}
                data-kind={kind}
                rows={kind === 'lines' ? 3 : 4}
                defaultValue={
                  current === undefined ? '' : kind === 'lines' ? (current as string[]).join('\n') : JSON.stringify(current, null, 2)
                }
              />
            )}
            {kind === 'lines' ? <small class="hint">One per line.</small> : kind === 'json' ? <small class="hint">JSON.</small> : hint}
          </div>
        );
      })}
    </div>
  );
}

/**
 * The object the fields of `form` describe (empty fields left out; the entries of a list in
 * their order); a JSON view open for `prefix` (SchemaEditor) is read instead. JSON that does
 * not parse throws, naming the field.
 */
export function readSchemaForm(form: HTMLFormElement, prefix: string): Record<string, unknown> {
  const jsonView = Array.from(form.querySelectorAll<HTMLTextAreaElement>('textarea[data-json-view]')).find(
    (el) => el.dataset.jsonView === prefix,
  );
  if (jsonView) {
    const parsed = jsonView.value.trim() === '' ? {} : parseJson(jsonView.value, jsonView.name);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${jsonView.name} must be a JSON object`);
    return parsed as Record<string, unknown>;
  }
  const out: Record<string, unknown> = {};
  // Every list present is an array, even when all its entries are left empty.
  for (const el of Array.from(form.querySelectorAll<HTMLElement>('[data-list]'))) {
    const name = el.dataset.list!;
    if (name.startsWith(prefix)) place(out, name.slice(prefix.length).split('.'), []);
  }
  for (const el of Array.from(form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('[data-kind]'))) {
    if (!el.name.startsWith(prefix)) continue;
    const raw = el.value.trim();
    if (raw === '') continue;
    const kind = el.dataset.kind as Kind;
    const value =
      kind === 'number'
        ? Number(raw)
        : kind === 'boolean'
          ? raw === 'true'
          : kind === 'lines'
            ? raw
                .split('\n')
                .map((l) => l.trim())
                .filter(Boolean)
            : kind === 'json'
              ? parseJson(raw, el.name)
              : raw;
    place(out, el.name.slice(prefix.length).split('.'), value);
  }
  // Entries left empty are dropped; a list left with none is left out, as an empty field is.
  return prune(out) as Record<string, unknown>;
}

/** Sets `value` at `path` (a number in the path is an index into a list). */
function place(out: Record<string, unknown>, path: string[], value: unknown) {
  let at: Record<string, unknown> | unknown[] = out;
  path.forEach((part, i) => {
    const last = i === path.length - 1;
    const key = /^\d+$/.test(part) ? Number(part) : part;
    const container = at as Record<string | number, unknown>;
    if (last) {
      if (!(Array.isArray(value) && value.length === 0 && container[key] !== undefined)) container[key] = value;
    } else at = (container[key] ??= /^\d+$/.test(path[i + 1]!) ? [] : {}) as Record<string, unknown> | unknown[];
  });
}

function prune(value: unknown): unknown {
  if (Array.isArray(value)) {
    const entries = value
      .filter((v) => v !== undefined)
      .map(prune)
      .filter((v) => v !== undefined);
    return entries.length > 0 ? entries : undefined;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).flatMap(([k, v]) => {
      const kept = prune(v);
      return kept === undefined ? [] : [[k, kept] as const];
    });
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  return value;
}

/**
 * A list of objects as one group of fields per entry, with buttons to add and remove
 * entries (sections of a content type, preferred terms of the brand kit).
 */
function ObjectList({
  name,
  label,
  entry,
  schema,
  components,
  value,
}: {
  name: string;
  label: string;
  entry: string;
  schema: JsonSchema;
  components: Components;
  value: Record<string, unknown>[] | undefined;
}) {
  // Each entry keeps a stable key, so removing one keeps what was typed in the others.
  const [entries, setEntries] = useState(() =>
    (value && value.length > 0 ? value : Array.from({ length: schema.minItems ?? 0 }, () => undefined)).map((v, i) => ({
      key: i,
      value: v,
    })),
  );
  const [next, setNext] = useState(entries.length);
  const max = schema.maxItems ?? Infinity;
  const items = schema.items!;
  return (
    <fieldset class="object-list" data-list={name}>
      <legend>{label}</legend>
      {schema.description && <small class="hint">{schema.description}</small>}
      {entries.map((e, i) => (
        <fieldset key={e.key} class="list-entry">
          <legend>
            {entry.replace(/^\w/, (c) => c.toUpperCase())} {i + 1}
          </legend>
          <SchemaFields schema={items} components={components} value={e.value} prefix={`${name}.${i}.`} />
          <button type="button" class="secondary" onClick={() => setEntries(entries.filter((x) => x.key !== e.key))}>
            Remove {entry} {i + 1}
          </button>
        </fieldset>
      ))}
      {entries.length < max && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setEntries([...entries, { key: next, value: undefined }]);
            setNext(next + 1);
          }}
        >
          Add {entry}
        </button>
      )}
    </fieldset>
  );
}

/**
 * The fields of a schema, or the whole object as JSON (for pasting a configuration or
 * reading it at once). Switching carries what was entered across.
 */
export function SchemaEditor({
  schema,
  components,
  value,
  prefix,
  label,
}: {
  schema: JsonSchema;
  components: Components;
  value: Record<string, unknown> | undefined;
  prefix: string;
  label: string;
}) {
  const [json, setJson] = useState<string>();
  const [current, setCurrent] = useState(value);
  const [error, setError] = useState<string>();
  const [version, setVersion] = useState(0);
  const id = useId();
  const toJson = (e: Event) => {
    const form = (e.currentTarget as HTMLElement).closest('form')!;
    try {
      setJson(JSON.stringify(readSchemaForm(form, prefix), null, 2));
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const toFields = () => {
    try {
      const parsed = json?.trim() ? (JSON.parse(json) as Record<string, unknown>) : {};
      setCurrent(parsed);
      setVersion(version + 1);
      setJson(undefined);
      setError(undefined);
    } catch {
      setError(`${label} is not valid JSON`);
    }
  };
  return (
    <div class="schema-editor">
      <div class="view-switch" role="group" aria-label={`${label}: view`}>
        <button type="button" class="secondary" aria-pressed={json === undefined} onClick={() => json !== undefined && toFields()}>
          Form
        </button>
        <button type="button" class="secondary" aria-pressed={json !== undefined} onClick={(e) => json === undefined && toJson(e)}>
          JSON
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {json === undefined ? (
        <SchemaFields key={version} schema={schema} components={components} value={current} prefix={prefix} />
      ) : (
        <div class="field">
          <label for={id}>{label} (JSON)</label>
          <textarea
            id={id}
            name={`${prefix}json`}
            data-json-view={prefix}
            rows={12}
            spellcheck={false}
            value={json}
            onInput={(e) => setJson((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </div>
      )}
    </div>
  );
}

function parseJson(raw: string, field: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new Error(`${field} is not valid JSON`);
  }
}
