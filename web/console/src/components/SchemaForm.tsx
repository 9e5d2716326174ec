import { useId } from 'preact/hooks';

/**
 * Form fields generated from the JSON Schema the API publishes for a body (its
 * OpenAPI document), so the console offers exactly the closed key set the API
 * accepts: text and numbers as inputs, choices (a union of constants) as a
 * select, booleans as a checkbox, lists of text one per line, nested objects as
 * a group, and anything else as JSON. Values are read back with `readSchemaForm`.
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

const labelOf = (key: string) => key.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase());

type Kind = 'choice' | 'boolean' | 'number' | 'text' | 'lines' | 'object' | 'json';
function kindOf(s: JsonSchema): Kind {
  if (choicesOf(s)) return 'choice';
  if (s.type === 'boolean') return 'boolean';
  if (s.type === 'integer' || s.type === 'number') return 'number';
  if (s.type === 'string') return 'text';
  if (s.type === 'array' && s.items?.type === 'string' && !choicesOf(s.items)) return 'lines';
  if (s.type === 'object' && s.properties) return 'object';
  return 'json';
}

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
        const kind = kindOf(s);
        const hint = s.description ? <small class="hint">{s.description}</small> : null;
        if (kind === 'object')
          return (
            <fieldset key={name}>
              <legend>{labelOf(key)}</legend>
              <SchemaFields schema={s} components={components} value={current as Record<string, unknown>} prefix={`${name}.`} />
            </fieldset>
          );
        return (
          <div class="field" key={name}>
            <label for={id}>{labelOf(key)}</label>
            {kind === 'choice' ? (
              <select id={id} name={name} data-kind={kind}>
                <option value="">(default)</option>
                {choicesOf(s)!.map((c) => (
                  <option key={c} value={c} selected={current === c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : kind === 'boolean' ? (
              <select id={id} name={name} data-kind={kind}>
                <option value="">(default)</option>
                <option value="true" selected={current === true}>
                  yes
                </option>
                <option value="false" selected={current === false}>
                  no
                </option>
              </select>
            ) : kind === 'number' ? (
              <input id={id} name={name} data-kind={kind} type="number" min={s.minimum} max={s.maximum} value={current as number} />
            ) : kind === 'text' ? (
              <input id={id} name={name} data-kind={kind} maxLength={s.maxLength} value={(current as string) ?? ''} />
            ) : (
              <textarea
                id={id}
                name={name}
                data-kind={kind}
                rows={kind === 'lines' ? 3 : 4}
                value={current === undefined ? '' : kind === 'lines' ? (current as string[]).join('\n') : JSON.stringify(current, null, 2)}
              />
            )}
            {kind === 'lines' ? <small class="hint">One per line.</small> : kind === 'json' ? <small class="hint">JSON.</small> : hint}
          </div>
        );
      })}
    </div>
  );
}

/** The object the fields of `form` describe (empty fields left out); JSON fields that do not parse throw, naming the field. */
export function readSchemaForm(form: HTMLFormElement, prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
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
    const path = el.name.slice(prefix.length).split('.');
    let at = out;
    for (const part of path.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
    at[path.at(-1)!] = value;
  }
  return out;
}

function parseJson(raw: string, field: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new Error(`${field} is not valid JSON`);
  }
}
