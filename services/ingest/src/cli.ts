import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { formatOfName } from './extract/types.js';
import { UPLOAD_FORMATS, MAX_FILES_PER_CALL } from './app/intake.js';
import { callApi, DEFAULT_RETRY, type ApiResult, type RetryPolicy } from './cli-http.js';
import { markdownTitle } from './markdown-title.js';

/**
 * Bulk import for people with a folder of documents:
 *   npm run kb -- ingest <dir> [--url http://127.0.0.1:8080] [--key <api key>] [--parent-id <folder>] [--tags a,b]
 * Uploads every supported file under <dir> through the public API in batches of
 * 10 (Markdown as raw text), follows each to completed or failed with a progress
 * bar, and prints a summary. Safe to run again on the same folder: the server
 * skips bytes the organization already holds (files and raw text alike), so
 * transient failures are retried with backoff and a re-run after an outage
 * creates nothing twice. Exit code 1 when any file failed.
 */
const DEV_URL = 'http://127.0.0.1:8080';
const DEV_KEY = 'kb_dev_0000000000000000000000000000';
const TERMINAL = new Set(['completed', 'failed']);
const POLL_MS = 500;

interface Entry {
  path: string;
  name: string;
  state: 'pending' | 'queued' | 'processing' | 'completed' | 'failed' | 'duplicate' | 'unsupported';
  /** This run created a content item for it. */
  created?: boolean;
  content_id?: string;
  reason?: string;
  /** Whether the server finds it by its words and by its meaning (its vectors are computed after extraction). */
  search?: { keyword: string; semantic: string };
}

const usage = `Usage: npm run kb -- ingest <dir> [options]

Uploads every PDF, TXT, CSV, DOC, DOCX, XLS, XLSX, PPT, PPTX, HTML, JSON, XML
(and Markdown, as raw text) under <dir> and waits until each is processed.
Running it again on the same folder creates nothing twice: a file whose bytes
the organization already holds is skipped as a duplicate (one whose processing
failed is sent again). Connection errors, 429 and 5xx answers are retried with
exponential backoff and jitter, honouring Retry-After.

Options:
  --url <url>          server (default ${DEV_URL}, or KB_URL)
  --key <api key>      API key (default the development key, or KB_API_KEY)
  --parent-id <uuid>   knowledge-base folder to file everything under
  --tags <a,b>         tags for every file
  --retries <n>        retries of a call after a transient failure (default ${DEFAULT_RETRY.attempts - 1})
  --no-wait            upload only; do not wait for processing
`;

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out.sort();
}

function progressBar(entries: Entry[], interactive: boolean, done = false): void {
  const count = (s: Entry['state']) => entries.filter((e) => e.state === s).length;
  const skipped = count('duplicate') + count('unsupported');
  const finished = count('completed') + count('failed') + skipped;
  const width = 30;
  const filled = entries.length ? Math.round((finished / entries.length) * width) : width;
  const line =
    `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${finished}/${entries.length}  ` +
    `completed ${count('completed')}  failed ${count('failed')}  skipped ${skipped}  ` +
    `processing ${count('processing')}  queued ${count('queued') + count('pending')}` +
    searchable(entries);
  if (interactive) process.stderr.write(`\r${line}${done ? '\n' : ''}`);
  else if (done) process.stderr.write(`${line}\n`);
}

/** How many of the created items are searchable by keywords and by meaning, as the server reports them. */
function searchable(entries: Entry[]): string {
  const known = entries.filter((e) => e.created && e.search);
  if (known.length === 0) return '';
  const keyword = known.filter((e) => e.search!.keyword === 'ready').length;
  if (known.every((e) => e.search!.semantic === 'off')) return `  searchable: keyword ${keyword} (semantic off)`;
  return `  searchable: keyword ${keyword}  semantic ${known.filter((e) => e.search!.semantic === 'ready').length}`;
}

type Body = { json: object } | { form: () => Promise<FormData> };
type Call = (method: string, path: string, body?: Body) => Promise<ApiResult>;

/** The public API with the key, each call retried on transient failures (logged). */
function apiClient(base: string, key: string, policy: RetryPolicy, log: (line: string) => void): Call {
  return (method, path, body) =>
    callApi(
      `${base}/api/v1${path}`,
      {
        method,
        headers: { 'x-api-key': key, ...(body && 'json' in body && { 'content-type': 'application/json' }) },
        ...(body && { body: 'json' in body ? () => JSON.stringify(body.json) : body.form }),
      },
      {
        policy,
        onRetry: ({ attempt, delayMs, reason }) =>
          log(`  retry   ${method} ${path}: ${reason}; attempt ${attempt + 1} of ${policy.attempts} in ${delayMs} ms`),
      },
    );
}

const errorMessage = (res: ApiResult) =>
  `HTTP ${res.status}: ${res.json?.error?.message ?? res.text.slice(0, 200)}` +
  (res.attempts > 1 ? ` (after ${res.attempts} attempts)` : '');
const unreachable = (err: unknown) => `could not reach the server: ${err instanceof Error ? err.message : String(err)}`;

/** The call's answer, or the reason it could not be made (the connection kept failing). */
async function attempt(call: () => Promise<ApiResult>): Promise<ApiResult | { error: string }> {
  try {
    return await call();
  } catch (err) {
    return { error: unreachable(err) };
  }
}

export async function ingestDirectory(options: {
  dir: string;
  url: string;
  key: string;
  parentId?: string;
  tags: string[];
  wait: boolean;
  interactive: boolean;
  log: (line: string) => void;
  retry?: RetryPolicy;
}): Promise<Entry[]> {
  const call = apiClient(options.url.replace(/\/+$/, ''), options.key, options.retry ?? DEFAULT_RETRY, options.log);
  const paths = await walk(options.dir);
  const entries: Entry[] = paths.map((path) => ({ path, name: relative(options.dir, path), state: 'pending' }));
  const files: Entry[] = [];
  for (const entry of entries) {
    const format = formatOfName(entry.path);
    if (format === 'md') {
      const text = await readFile(entry.path, 'utf8');
      const res = await attempt(() =>
        call('POST', '/org/kb/raw', {
          json: {
            title: markdownTitle(text) ?? basename(entry.path, extname(entry.path)),
            text,
            tags: options.tags,
            ...(options.parentId && { parent_id: options.parentId }),
          },
        }),
      );
      if ('error' in res) Object.assign(entry, { state: 'failed', reason: res.error });
      else if (res.status === 202) Object.assign(entry, { state: 'queued', created: true, content_id: res.json.id });
      else if (res.status === 422 && res.json?.error?.details?.content_id)
        Object.assign(entry, { state: 'duplicate', content_id: res.json.error.details.content_id });
      else Object.assign(entry, { state: 'failed', reason: errorMessage(res) });
    } else if (format && UPLOAD_FORMATS.includes(format)) files.push(entry);
    else Object.assign(entry, { state: 'unsupported' });
  }
  progressBar(entries, options.interactive);

  for (let i = 0; i < files.length; i += MAX_FILES_PER_CALL) {
    const batch = files.slice(i, i + MAX_FILES_PER_CALL);
    const form = async () => {
      const form = new FormData();
      for (const entry of batch) form.append('files', new Blob([await readFile(entry.path)]), basename(entry.path));
      if (options.parentId) form.append('parent_id', options.parentId);
      for (const tag of options.tags) form.append('tags', tag);
      return form;
    };
    const res = await attempt(() => call('POST', '/org/kb/upload', { form }));
    // 422: every file of the batch is a duplicate, each outcome in the error details.
    const outcomes: { status: string; content_id: string }[] | undefined =
      'error' in res ? undefined : res.status === 202 ? res.json.files : res.status === 422 ? res.json?.error?.details?.files : undefined;
    batch.forEach((entry, j) => {
      const outcome = outcomes?.[j];
      if (!outcome) Object.assign(entry, { state: 'failed', reason: 'error' in res ? res.error : errorMessage(res) });
      else if (outcome.status === 'skipped') Object.assign(entry, { state: 'duplicate', content_id: outcome.content_id });
      else Object.assign(entry, { state: 'queued', created: true, content_id: outcome.content_id });
    });
    progressBar(entries, options.interactive);
  }

  // Open until processed and, when completed, searchable by its words (the index follows a moment later).
  const open = () =>
    entries.filter((e) => e.created && (!TERMINAL.has(e.state) || (e.state === 'completed' && e.search?.keyword === 'pending')));
  if (options.wait) {
    while (open().length > 0) {
      for (const entry of open()) {
        const res = await attempt(() => call('GET', `/org/kb/content/${entry.content_id}`));
        if ('error' in res) Object.assign(entry, { state: 'failed', reason: res.error });
        else if (res.status !== 200) Object.assign(entry, { state: 'failed', reason: errorMessage(res) });
        else {
          entry.state = res.json.processing_status;
          if (res.json.search) entry.search = res.json.search;
          if (entry.state === 'failed') entry.reason = res.json.failure_reason;
        }
      }
      progressBar(entries, options.interactive);
      if (open().length > 0) await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
  progressBar(entries, options.interactive, true);

  const count = (s: Entry['state']) => entries.filter((e) => e.state === s).length;
  const created = entries.filter((e) => e.created && e.state !== 'failed').length;
  options.log(
    `Summary: ${created} created, ${count('duplicate')} skipped (duplicate), ${count('unsupported')} skipped (unsupported), ` +
      `${count('failed')} failed` +
      (options.wait ? '' : ` (${open().length} still processing)`),
  );
  const semantic = entries.filter((e) => e.created && e.state === 'completed' && e.search && e.search.semantic !== 'off');
  const pending = semantic.filter((e) => e.search!.semantic === 'pending').length;
  if (pending > 0)
    options.log(
      `Search: ${semantic.length - pending} of ${semantic.length} found by meaning so far; the rest get their vectors in the background (keyword search finds them now)`,
    );
  for (const e of entries) {
    if (e.state === 'failed') options.log(`  failed  ${e.name}: ${e.reason ?? ''}`);
    else if (e.state === 'duplicate') options.log(`  skipped ${e.name}: duplicate of content ${e.content_id}`);
    else if (e.state === 'unsupported') options.log(`  skipped ${e.name}: unsupported file type`);
  }
  return entries;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'ingest') {
    process.stderr.write(usage);
    return command === undefined || command === '--help' ? 0 : 2;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      url: { type: 'string', default: process.env.KB_URL ?? DEV_URL },
      key: { type: 'string', default: process.env.KB_API_KEY ?? DEV_KEY },
      'parent-id': { type: 'string' },
      tags: { type: 'string' },
      retries: { type: 'string', default: String(DEFAULT_RETRY.attempts - 1) },
      'no-wait': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || positionals.length !== 1) {
    process.stderr.write(usage);
    return values.help ? 0 : 2;
  }
  const retries = Number(values.retries);
  if (!Number.isInteger(retries) || retries < 0) {
    process.stderr.write(`--retries must be a whole number, got ${values.retries}\n`);
    return 2;
  }
  const dir = positionals[0]!;
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
    process.stderr.write(`Not a directory: ${dir}\n`);
    return 2;
  }
  const entries = await ingestDirectory({
    dir,
    url: values.url,
    key: values.key,
    ...(values['parent-id'] && { parentId: values['parent-id'] }),
    tags: (values.tags ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t),
    wait: !values['no-wait'],
    interactive: process.stderr.isTTY === true,
    log: (line) => process.stdout.write(`${line}\n`),
    retry: { ...DEFAULT_RETRY, attempts: retries + 1 },
  });
  return entries.some((e) => e.state === 'failed') ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
