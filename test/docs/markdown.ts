import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What the docs test reads from the repository's Markdown: fenced examples marked runnable,
 * heading anchors and relative links. A few dozen lines of CommonMark's block rules are enough
 * for pages we write ourselves; no Markdown parser is a dependency of this repository.
 */

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** README.md, CHANGELOG.md and every page under docs/, as paths relative to the repository root. */
export function documentationFiles(root = REPO_ROOT): string[] {
  const pages = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', 'CHANGELOG.md', ...pages];
}

export interface FencedBlock {
  /** The info string after the opening fence, e.g. `sh runnable`. */
  info: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** Every fenced code block of a document, in order. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(lines[j]!);
      if (close && close[1]![0] === fence[0] && close[1]!.length >= fence.length) break;
      body.push(lines[j]!);
    }
    blocks.push({ info: open[2]!.trim(), code: body.join('\n'), line: i + 1 });
    i = j;
  }
  return blocks;
}

export type RunnableKind = 'shell' | 'http';

/** `sh runnable`, `bash runnable` and `shell runnable` run in bash; `http runnable` is one request. */
export function runnableKind(block: FencedBlock): RunnableKind | undefined {
  const [language, ...flags] = block.info.split(/\s+/);
  if (!flags.includes('runnable')) return undefined;
  if (language === 'sh' || language === 'bash' || language === 'shell') return 'shell';
  if (language === 'http') return 'http';
  throw new Error(`line ${block.line}: a runnable block must be sh, bash, shell or http, not ${language}`);
}

/** The document without its fenced blocks (blank lines in their place, so line numbers hold). */
function outsideFences(markdown: string): string {
  const lines = markdown.split('\n');
  for (const block of fencedBlocks(markdown)) {
    const end = block.line + block.code.split('\n').length;
    for (let i = block.line - 1; i <= end && i < lines.length; i++) lines[i] = '';
  }
  return lines.join('\n');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slugOf(heading: string): string {
  return heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a document's headings, with GitHub's -1, -2 suffixes for repeated ones. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideFences(markdown).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = slugOf(heading[1]!);
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

export interface Link {
  target: string;
  line: number;
}

/** Inline links and images outside code: `[text](target)`. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  outsideFences(markdown)
    .split('\n')
    .forEach((line, index) => {
      const prose = line.replace(/`[^`]*`/g, '');
      for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        links.push({ target: match[1]!, line: index + 1 });
      }
    });
  return links;
}

/** Whether a link leaves the repository (a scheme such as https: or mailto:). */
export const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

export interface HttpExample {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** An `http runnable` block: a request line, header lines, then a blank line and the body if any. */
export function parseHttpExample(code: string): HttpExample {
  const [head, ...rest] = code.split(/\n\s*\n/);
  const [requestLine, ...headerLines] = head!.split('\n');
  const request = /^([A-Z]+)\s+(\S+)(?:\s+HTTP\/[\d.]+)?$/.exec(requestLine!.trim());
  if (!request) throw new Error(`not a request line: ${requestLine}`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const header = /^([^:\s]+):\s*(.*)$/.exec(line.trim());
    if (!header) throw new Error(`not a header line: ${line}`);
    headers[header[1]!.toLowerCase()] = header[2]!;
  }
  const body = rest.join('\n\n').trim();
  return { method: request[1]!, path: request[2]!, headers, body: body === '' ? undefined : body };
}

export const readDoc = (path: string, root = REPO_ROOT): string => readFileSync(join(root, path), 'utf8');
