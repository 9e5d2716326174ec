import type { AnswerEngine } from './port.js';

export interface OpenAiChatEngineOptions {
  /** e.g. https://api.perplexity.ai or http://127.0.0.1:8000 (with or without /v1). */
  baseUrl: string;
  apiKey?: string | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const URL_IN_TEXT = /https?:\/\/[^\s<>"'`)\]]+/g;

/** URLs written in the answer, in order, without trailing punctuation. */
export function urlsInText(text: string): string[] {
  return [...text.matchAll(URL_IN_TEXT)].map((m) => m[0].replace(/[.,;:!?]+$/, ''));
}

interface ChatResponse {
  choices?: { message?: { content?: unknown; annotations?: { type?: string; url_citation?: { url?: unknown } }[] } }[];
  citations?: unknown[];
}

/**
 * Citations, by the first source that has any: the response's `citations`
 * array (Perplexity style: URLs or { url }), the message's url_citation
 * annotations (OpenAI style), else the URLs in the text.
 */
export function parseChatResponse(body: ChatResponse): { text: string; citations: string[] } {
  const message = body.choices?.[0]?.message;
  if (!message || typeof message.content !== 'string') throw new Error('the answer engine returned no message content');
  const text = message.content;
  const fromField = (body.citations ?? [])
    .map((c) =>
      typeof c === 'string'
        ? c
        : typeof c === 'object' && c && typeof (c as { url?: unknown }).url === 'string'
          ? (c as { url: string }).url
          : null,
    )
    .filter((u): u is string => u !== null);
  if (fromField.length) return { text, citations: fromField };
  const fromAnnotations = (message.annotations ?? [])
    .filter((a) => a.type === 'url_citation' && typeof a.url_citation?.url === 'string')
    .map((a) => a.url_citation!.url as string);
  if (fromAnnotations.length) return { text, citations: fromAnnotations };
  return { text, citations: urlsInText(text) };
}

/** Any OpenAI-compatible chat completions endpoint as an answer engine. */
export function createOpenAiChatEngine(options: OpenAiChatEngineOptions): AnswerEngine {
  const base = options.baseUrl.replace(/\/+$/, '');
  const url = `${base}${base.endsWith('/v1') ? '' : '/v1'}/chat/completions`;
  const doFetch = options.fetch ?? fetch;
  return {
    async ask({ model, prompt, location }) {
      const messages = [
        ...(location && location !== 'global' ? [{ role: 'system', content: `The user asking is located in ${location}.` }] : []),
        { role: 'user', content: prompt },
      ];
      const res = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.apiKey && { authorization: `Bearer ${options.apiKey}` }) },
        body: JSON.stringify({ model, messages }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`the answer engine answered ${res.status}: ${text.slice(0, 200)}`);
      let body: ChatResponse;
      try {
        body = JSON.parse(text) as ChatResponse;
      } catch {
        throw new Error('the answer engine returned a body that is not JSON');
      }
      return parseChatResponse(body);
    },
  };
}
