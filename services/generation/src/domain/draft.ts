import type { DraftRevision } from '@kb/events';
import type { FactVerdict, SentenceSupport } from '@kb/ai';
import type { ContentTypeConfig } from './settings.js';

/** Pure assembly of a draft revision from verified sections: numbering, rendering, totals. */

export type DraftSection = DraftRevision['sections'][number];
export type DraftSentence = DraftSection['sentences'][number];
export type Citation = DraftSentence['citations'][number];

export interface VerifiedSentence {
  text: string;
  verdict: FactVerdict;
  citations: Citation[];
  /** Why it is not supported (the fact checker's reason), when it is not. */
  reason?: string;
  /** The paragraph of its section (see DraftedSentence.paragraph). */
  paragraph?: number;
}

export interface VerifiedSection {
  section_id: string;
  title: string;
  sentences: VerifiedSentence[];
}

/** At most this many characters of body (Kafka's message limit is 1 MB; a draft travels whole). */
export const MAX_BODY_CHARS = 200_000;

export const isFactual = (v: FactVerdict) => v !== 'not_factual';
export const isSupported = (v: FactVerdict) => v === 'supported' || v === 'not_factual';

export function citationOf(s: SentenceSupport): Citation {
  return { content_id: s.content_id, version_id: s.version_id, chunk_id: s.chunk_id, quote: s.quote, score: s.score };
}

export function totalsOf(sections: { sentences: { verdict: FactVerdict }[] }[]) {
  const all = sections.flatMap((s) => s.sentences);
  const factual = all.filter((s) => isFactual(s.verdict)).length;
  const supported = all.filter((s) => s.verdict === 'supported').length;
  return { sentences: all.length, factual, supported, unsupported: factual - supported };
}

const html = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Renders the body in the content type's format, citing chunks as [n] numbered by first use. */
export function renderBody(
  sections: { title: string; sentences: { text: string; citations: Citation[]; paragraph?: number | undefined }[] }[],
  config: Pick<ContentTypeConfig, 'format' | 'citation_style'>,
  options: { bullets?: boolean } = {},
): string {
  const numbers = new Map<string, number>();
  const marked = (s: { text: string; citations: Citation[] }) => {
    if (config.citation_style === 'none' || s.citations.length === 0) return s.text;
    const ns = [...new Set(s.citations.map((c) => numbers.get(c.chunk_id) ?? numbers.set(c.chunk_id, numbers.size + 1).get(c.chunk_id)!))];
    return `${s.text} ${ns.map((n) => `[${n}]`).join('')}`;
  };
  const parts = sections
    .filter((s) => s.sentences.length > 0)
    .map((section) => {
      const lines = section.sentences.map(marked);
      const paragraphs = paragraphsOf(section.sentences).map((p) => p.map((i) => lines[i]!).join(' '));
      if (config.format === 'html') {
        const body = options.bullets
          ? `<ul>${lines.map((l) => `<li>${html(l)}</li>`).join('')}</ul>`
          : paragraphs.map((p) => `<p>${html(p)}</p>`).join('\n');
        return `<h2>${html(section.title)}</h2>\n${body}`;
      }
      return `## ${section.title}\n\n${options.bullets ? lines.map((l) => `- ${l}`).join('\n') : paragraphs.join('\n\n')}`;
    });
  return parts.join('\n\n').slice(0, MAX_BODY_CHARS);
}

/** A section's sentences grouped by paragraph (indexes into the list, in order); sentences without one form a single paragraph. */
export function paragraphsOf(sentences: { paragraph?: number | undefined }[]): number[][] {
  const out: number[][] = [];
  sentences.forEach((s, i) => {
    if (out.length === 0 || (s.paragraph !== undefined && s.paragraph !== sentences[i - 1]!.paragraph)) out.push([]);
    out.at(-1)!.push(i);
  });
  return out;
}

export function numberSentences(sections: VerifiedSection[]): DraftSection[] {
  let index = 0;
  return sections.map((s) => ({
    section_id: s.section_id,
    title: s.title,
    sentences: s.sentences.map((x) => ({
      index: index++,
      text: x.text,
      verdict: x.verdict,
      citations: x.citations,
      ...(x.reason && x.verdict !== 'supported' && { reason: x.reason }),
      ...(x.paragraph !== undefined && { paragraph: x.paragraph }),
    })),
  }));
}

export function sourcesOf(sections: DraftSection[]): string[] {
  return [...new Set(sections.flatMap((s) => s.sentences.flatMap((x) => x.citations.map((c) => c.content_id))))];
}
