import { createServer, type Server } from 'node:http';

/**
 * A local stand-in for an OpenAI-compatible chat completions endpoint, speaking
 * its wire format: model "sonar" answers Perplexity style (a `citations`
 * array), "gpt-4o" OpenAI style (url_citation annotations), "plain" with URLs
 * only in the text, and "broken" with a 500.
 */
export interface FakeAnswerEngine {
  url: string;
  requests: { model: string; messages: { role: string; content: string }[]; authorization: string | undefined }[];
  stop(): Promise<void>;
}

export async function startFakeAnswerEngine(): Promise<FakeAnswerEngine> {
  const requests: FakeAnswerEngine['requests'] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw) as { model: string; messages: { role: string; content: string }[] };
      requests.push({ ...body, authorization: req.headers.authorization });
      const question = body.messages.at(-1)!.content;
      const send = (payload: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      const message = (content: string, extra: object = {}) => ({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: body.model,
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content, ...extra } }],
      });
      switch (body.model) {
        case 'sonar':
          send({
            ...message(`For "${question}": Acme is first, then Globex.`),
            citations: ['https://www.acme.com/guide/', 'https://review.example/acme'],
          });
          return;
        case 'gpt-4o':
          send(
            message(`Globex is popular. See https://globex.com/x.`, {
              annotations: [
                { type: 'url_citation', url_citation: { url: 'https://globex.com/x', title: 'x', start_index: 0, end_index: 1 } },
              ],
            }),
          );
          return;
        case 'plain':
          send(message('Read https://acme.com/a, and https://news.example.org/b.'));
          return;
        default:
          res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"model exploded"}}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
