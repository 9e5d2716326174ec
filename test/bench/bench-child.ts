/**
 * Child processes of a benchmark, driven over IPC: the parent `ask`s with a
 * request and gets the child's reply, or an error when the child failed or
 * exited first; the child `answerRequests` with an async handler.
 */
import { fork } from 'node:child_process';

type Answer<Reply> = { ok: true; reply: Reply } | { ok: false; error: string };

/** Forks `file` (relative to this folder) with the given node flags (by default this process's). */
export function child(file: string, execArgv = process.execArgv) {
  const forked = fork(new URL(file, import.meta.url), { execArgv });
  const ask = <Req, Reply>(request: Req) =>
    new Promise<Reply>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`${file} exited (${code}) before answering`));
      forked.once('exit', exited);
      forked.once('message', (m: Answer<Reply>) => {
        forked.off('exit', exited);
        if (m.ok) resolve(m.reply);
        else reject(new Error(`${file} failed: ${m.error}`));
      });
      forked.send(request as object);
    });
  return { ask, kill: () => forked.kill() };
}

/** In the child: answers each request from the parent with `handle`'s result or its error. */
export function answerRequests<Req, Reply>(handle: (request: Req) => Promise<Reply>): void {
  process.on('message', (request: Req) => {
    handle(request).then(
      (reply) => process.send!({ ok: true, reply } satisfies Answer<Reply>),
      (err: unknown) =>
        process.send!({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies Answer<Reply>),
    );
  });
}
