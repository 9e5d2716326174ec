import { STATUS_CODES } from 'node:http';
import { errors, type AppError } from '@kb/platform';
import { OutboundRefusedError, outboundFailureReason, redactUrl, refusedUrlReason, type OutboundPolicy } from '@kb/platform/outbound';

/** Validates a closed config object: only `allowed` keys, each checked. */
export function closedConfig(
  config: Record<string, unknown>,
  /** check answers true, false (the value is not `hint`), or the reason it is refused. */
  fields: Record<string, { required: boolean; check: (v: unknown) => boolean | string; hint: string }>,
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
    const verdict = f.check(v);
    if (verdict !== true)
      throw errors.validation(typeof verdict === 'string' ? `config.${key}: ${verdict}` : `config.${key} must be ${f.hint}`, {
        details: { field: `config.${key}` },
      });
    out[key] = v;
  }
  return out;
}

/** The check of a URL field: http(s), no credentials, not literally a refused address (the policy of @kb/platform/outbound). */
export const destinationUrl =
  (policy: OutboundPolicy) =>
  (v: unknown): true | string =>
    refusedUrlReason(v, policy) ?? true;

/**
 * A CMS that answered an error: its status and the standard reason, never its
 * body (which could carry what an internal service said). A 3xx is a failure:
 * redirects are not followed.
 */
export function remoteFailure(name: string, res: Response): AppError {
  void res.body?.cancel().catch(() => undefined);
  const reason =
    res.status >= 300 && res.status < 400
      ? 'redirects are not followed; give the final URL'
      : res.status === 401 || res.status === 403
        ? 'check the credentials'
        : (STATUS_CODES[res.status] ?? 'error');
  return errors.downstream(`${name} answered ${res.status} (${reason})`, { code: 'destination_failed', details: { status: res.status } });
}

/** A CMS that could not be called: refused by the address policy, or a short reason for the network failure. */
export function unreachable(name: string, base: string, err: unknown): AppError {
  const at = `${name} at ${redactUrl(base)}`;
  return errors.downstream(
    err instanceof OutboundRefusedError ? `${at} was not called: ${err.message}` : `${at} did not answer: ${outboundFailureReason(err)}`,
    { code: 'destination_failed' },
  );
}
