/**
 * The title a Markdown file gives itself, for `npm run kb -- ingest`: the front
 * matter's `title:`, else the text of its first Markdown heading (ATX `# …` or
 * setext, any level, outside code fences). HTML headings are skipped: documentation
 * sites often open every page with the same HTML banner. Undefined when the file
 * names no title, so the caller falls back to the file name.
 */
export function markdownTitle(text: string): string | undefined {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let i = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((line, n) => n > 0 && /^(---|\.\.\.)\s*$/.test(line));
    if (end > 0) {
      for (const line of lines.slice(1, end)) {
        const m = /^title\s*:\s*(.+?)\s*$/i.exec(line);
        const title = m && cleanTitle(m[1]!.replace(/^(["'])(.*)\1$/, '$2'));
        if (title) return title;
      }
      i = end + 1;
    }
  }
  let fence: string | null = null;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    const fenceMark = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fenceMark) {
      if (fence === null) fence = fenceMark[0]!;
      else if (fenceMark[0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const atx = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (atx) {
      const title = cleanTitle(atx[1]!);
      if (title) return title;
      continue;
    }
    const next = lines[i + 1];
    if (line.trim() && next !== undefined && /^\s{0,3}(=+|-+)\s*$/.test(next) && !/^\s{0,3}[-*+>|<]/.test(line)) {
      const title = cleanTitle(line);
      if (title) return title;
    }
  }
  return undefined;
}

/** Inline markup removed ([text](url) → text, `code` → code, emphasis marks), spaces collapsed, at most 500 characters. */
function cleanTitle(raw: string): string | undefined {
  const text = raw
    .replace(/<[^>]+>/g, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_]+/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 500);
  return text || undefined;
}
