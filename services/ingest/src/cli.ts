import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { formatOfName } from './extract/types.js';
import { UPLOAD_FORMATS, MAX_FILES_PER_CALL } from './app/intake.js';

/**
 * Bulk import for people with a folder of documents:
 *   npm run kb -- ingest <dir> [--url http://127.0.0.1:8080] [--key <api key>] [--parent-id <folder>] [--tags a,b]
 * Uploads every supported file under <dir> through the public API in batches of
 * 10 (Markdown as raw text), follows each to completed or failed with a progress
 * bar, and prints a summary. Exit code 1 when any file failed.
 */
const DEV_URL = 'http://127.0.0.1:8080';
const DEV_KEY = 'kb_dev_0000000000000000000000000000';
const TERMINAL = new Set(['completed', 'failed']);

interface Entry {
  path: string;
  name: string;
  state: 'pending' | 'queued' | 'processing' | 'completed' | 'failed' | 'skipped';
  content_id?: string;
  reason?: string;
}

const usage = `Usage: npm run kb -- ingest <dir> [options]

Uploads every PDF, TXT, CSV, DOC, DOCX, XLS, XLSX, PPT, PPTX, HTML, JSON, XML
(and Markdown, as raw text) under <dir> and waits until each is processed.

Options:
  --url <url>          server (default ${DEV_URL}, or KB_URL)
  --key <api key>      API key (default the development key, or KB_API_KEY)
  --parent-id <uuid>   knowledge-base folder to file everything under
  --tags <a,b>         tags for every file
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
  const finished = count('completed') + count('failed') + count('skipped');
  const width = 30;
  const filled = entries.length ? Math.round((finished / entries.length) * width) : width;
  const line =
    `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${finished}/${entries.length}  ` +
    `completed ${count('completed')}  failed ${count('failed')}  skipped ${count('skipped')}  ` +
    `processing ${count('processing')}  queued ${count('queued') + count('pending')}`;
  if (interactive) process.stderr.write(`\r${line}${done ? '\n' : ''}`);
  else if (done) process.stderr.write(`${line}\n`);
}

async function api(base: string, key: string, method: string, path: string, body?: FormData | object) {
  const headers: Record<string, string> = { 'x-api-key': key };
  let payload: FormData | string | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${base}/api/v1${path}`, { method, headers, ...(payload !== undefined && { body: payload }) });
  const text = await res.text();
  let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

const errorMessage = (res: { status: number; json?: { error?: { message?: string } }; text: string }) =>
  `HTTP ${res.status}: ${res.json?.error?.message ?? res.text.slice(0, 200)}`;

export async function ingestDirectory(options: {
  dir: string;
  url: string;
  key: string;
  parentId?: string;
  tags: string[];
  wait: boolean;
  interactive: boolean;
  log: (line: string) => void;
}): Promise<Entry[]> {
  const base = options.url.replace(/\/+$/, '');
  const paths = await walk(options.dir);
  const entries: Entry[] = paths.map((path) => ({ path, name: relative(options.dir, path), state: 'pending' }));
  const files: Entry[] = [];
  for (const entry of entries) {
    const format = formatOfName(entry.path);
    if (format === 'md') {
      const res = await api(base, options.key, 'POST', '/org/kb/raw', {
        title: basename(entry.path, extname(entry.path)),
        text: await readFile(entry.path, 'utf8'),
        tags: options.tags,
        ...(options.parentId && { parent_id: options.parentId }),
      });
      if (res.status === 202) Object.assign(entry, { state: 'queued', content_id: res.json.id });
      else Object.assign(entry, { state: 'failed', reason: errorMessage(res) });
    } else if (format && UPLOAD_FORMATS.includes(format)) files.push(entry);
    else Object.assign(entry, { state: 'skipped', reason: 'unsupported file type' });
  }
  progressBar(entries, options.interactive);

  for (let i = 0; i < files.length; i += MAX_FILES_PER_CALL) {
    const batch = files.slice(i, i + MAX_FILES_PER_CALL);
    const form = new FormData();
    for (const entry of batch) form.append('files', new Blob([await readFile(entry.path)]), basename(entry.path));
    if (options.parentId) form.append('parent_id', options.parentId);
    for (const tag of options.tags) form.append('tags', tag);
    const res = await api(base, options.key, 'POST', '/org/kb/upload', form);
    const outcomes: { status: string; content_id: string }[] | undefined =
      res.status === 202 ? res.json.files : res.status === 422 ? res.json?.error?.details?.files : undefined;
    batch.forEach((entry, j) => {
      const outcome = outcomes?.[j];
      if (!outcome) Object.assign(entry, { state: 'failed', reason: errorMessage(res) });
      else if (outcome.status === 'skipped')
        Object.assign(entry, { state: 'skipped', content_id: outcome.content_id, reason: 'duplicate of existing content' });
      else Object.assign(entry, { state: 'queued', content_id: outcome.content_id });
    });
    progressBar(entries, options.interactive);
  }

  if (options.wait) {
    for (;;) {
      const open = entries.filter((e) => e.content_id && !TERMINAL.has(e.state) && e.state !== 'skipped');
      if (open.length === 0) break;
      for (const entry of open) {
        const res = await api(base, options.key, 'GET', `/org/kb/content/${entry.content_id}`);
        if (res.status !== 200) Object.assign(entry, { state: 'failed', reason: errorMessage(res) });
        else {
          entry.state = res.json.processing_status;
          if (entry.state === 'failed') entry.reason = res.json.failure_reason;
        }
      }
      progressBar(entries, options.interactive);
      if (entries.some((e) => e.content_id && !TERMINAL.has(e.state) && e.state !== 'skipped'))
        await new Promise((r) => setTimeout(r, 500));
    }
  }
  progressBar(entries, options.interactive, true);

  const count = (s: Entry['state']) => entries.filter((e) => e.state === s).length;
  options.log(
    `Summary: ${count('completed')} completed, ${count('skipped')} skipped, ${count('failed')} failed` +
      (options.wait ? '' : `, ${count('queued')} queued`),
  );
  for (const e of entries)
    if (e.state === 'failed' || e.state === 'skipped') options.log(`  ${e.state.padEnd(7)} ${e.name}: ${e.reason ?? ''}`);
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
      'no-wait': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || positionals.length !== 1) {
    process.stderr.write(usage);
    return values.help ? 0 : 2;
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
