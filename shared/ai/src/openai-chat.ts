import { errors } from '@kb/platform';
import { postJson, type OpenAiHttpOptions } from './openai-http.js';
import type { Llm } from './ports.js';

interface ChatResponse {
  choices: { message: { content: string | null } }[];
}

/** Any OpenAI-compatible POST /chat/completions endpoint, temperature 0. */
export function createOpenAiChat(options: OpenAiHttpOptions): Llm {
  return {
    model: options.model,
    async complete(messages) {
      const res = await postJson<ChatResponse>(options, '/chat/completions', { model: options.model, messages, temperature: 0 });
      const content = res.choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw errors.downstream('/chat/completions returned no message');
      return content;
    },
  };
}
