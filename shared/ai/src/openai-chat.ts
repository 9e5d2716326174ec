import { errors } from '@kb/platform';
import { postJson, type OpenAiHttpOptions } from './openai-http.js';
import type { Llm } from './ports.js';

interface ChatResponse {
  choices: { message: { content: string | null } }[];
}

/**
 * Any OpenAI-compatible POST /chat/completions endpoint, temperature 0. Asked
 * for structured output, it sends response_format json_schema; a server that
 * refuses it (a 400) is asked once more without.
 */
export function createOpenAiChat(options: OpenAiHttpOptions): Llm {
  return {
    model: options.model,
    async complete(messages, how) {
      const body = { model: options.model, messages, temperature: 0 };
      const structured = how?.jsonSchema
        ? { ...body, response_format: { type: 'json_schema', json_schema: { ...how.jsonSchema, strict: true } } }
        : undefined;
      const res = await (structured
        ? postJson<ChatResponse>(options, '/chat/completions', structured).catch((err: unknown) => {
            if (err instanceof Error && / answered 4\d\d$/.test(err.message) && !/ answered 40[13]$/.test(err.message))
              return postJson<ChatResponse>(options, '/chat/completions', body);
            throw err;
          })
        : postJson<ChatResponse>(options, '/chat/completions', body));
      const content = res.choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw errors.downstream('/chat/completions returned no message');
      return content;
    },
  };
}
