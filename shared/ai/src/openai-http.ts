import { errors } from '@kb/platform';

export interface OpenAiHttpOptions {
  /** Base URL including the version path, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** POSTs JSON to an OpenAI-compatible endpoint; a failure is a retriable upstream error, never the provider's text. */
export async function postJson<T>(options: OpenAiHttpOptions, path: string, body: unknown): Promise<T> {
  const doFetch = options.fetch ?? fetch;
  let res: Response;
  try {
    res = await doFetch(`${options.baseUrl.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(options.apiKey && { authorization: `Bearer ${options.apiKey}` }),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
  } catch (err) {
    throw errors.downstream(`${path} unreachable: ${(err as Error).message}`);
  }
  if (!res.ok) throw errors.downstream(`${path} answered ${res.status}`);
  return (await res.json()) as T;
}
