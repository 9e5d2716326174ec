import { createServer, type Server } from 'node:http';

/**
 * A local stand-in for an OpenAI-compatible chat model that drafts for the
 * generation service, speaking the wire format (POST /v1/chat/completions).
 * Asked to draft, it writes each requested section from the first numbered
 * source: that source's first sentence, the same sentence with its number
 * changed to 99 ("repairable"), and a warranty claim of 90 years
 * ("stubborn"), each cited [1]. Asked to rewrite a sentence, it fixes the
 * repairable one from the passage and returns the stubborn one unchanged.
 * Asked as the fact checker's judge ("Source span: ... Sentence: ..."), it
 * agrees with everything ("entails"): the worst judge there is, against which
 * the checker's own agreement checks must hold.
 * Anything else (e.g. the knowledge base's answer prompt) gets NOT_FOUND.
 */
export interface FakeChatModel {
  url: string;
  requests: { messages: { role: string; content: string }[] }[];
  stop(): Promise<void>;
}

export const STUBBORN = 'Most manufacturers warrant their solar panels for 90 years of service.';

const firstSentence = (text: string) => /[^.!?]*\d[^.!?]*[.!?]/.exec(text)?.[0].trim() ?? text.split(/(?<=[.!?])\s/)[0]!.trim();

export async function startFakeChatModel(): Promise<FakeChatModel> {
  const requests: FakeChatModel['requests'] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw) as { messages: { role: string; content: string }[] };
      requests.push(body);
      const user = body.messages.at(-1)!.content;
      let content = 'NOT_FOUND';
      if (user.startsWith('Sources:') && user.includes('\nSections:\n')) {
        const source = /\[1\] (?:[^:\n]*: )?([^\n]+)/.exec(user)?.[1] ?? '';
        const fact = firstSentence(source);
        const headings = user
          .split('\nSections:\n')[1]!
          .split('\n')
          .filter((l) => l.startsWith('## '));
        content = headings.map((h) => `${h}\n${fact} [1] ${fact.replace(/\d+/, '99')} [1] ${STUBBORN} [1]`).join('\n\n');
      } else if (user.startsWith('Source span:')) {
        content = JSON.stringify({ verdict: 'entails', reason: 'The span says so.' });
      } else if (user.startsWith('Source passage:')) {
        const [, passage, sentence] = /^Source passage:\n([\s\S]*)\n\nSentence:\n([\s\S]*)$/.exec(user) ?? [];
        content = sentence?.includes('99') ? firstSentence(passage!.replace(/^#.*\n+/, '')) : (sentence ?? '');
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/v1`, requests, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}
