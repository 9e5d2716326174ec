import { errors } from '@kb/platform';

/** Validates a closed config object: only `allowed` keys, each checked. */
export function closedConfig(
  config: Record<string, unknown>,
  fields: Record<string, { required: boolean; check: (v: unknown) => boolean; hint: string }>,
): Record<string, unknown> {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw errors.validation('config must be an object');
  for (const key of Object.keys(config))
    if (!Object.hasOwn(fields, key))
      throw errors.validation(`Unknown config key "${key}"; allowed: ${Object.keys(fields).join(', ') || 'none'}`, {
        code: 'unknown_config_key',
        details: { field: `config.${key}` },
      });
  const out: Record<string, unknown> = {};
  for (const [key, f] of Object.entries(fields)) {
    const v = config[key];
    if (v === undefined) {
      if (f.required) throw errors.validation(`config.${key} is required (${f.hint})`, { details: { field: `config.${key}` } });
      continue;
    }
    if (!f.check(v)) throw errors.validation(`config.${key} must be ${f.hint}`, { details: { field: `config.${key}` } });
    out[key] = v;
  }
  return out;
}

export const isHttpUrl = (v: unknown): boolean => {
  if (typeof v !== 'string' || v.length > 2048) return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};
