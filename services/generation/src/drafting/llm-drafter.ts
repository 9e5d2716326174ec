import { splitSentences, supportOf, type Llm } from '@kb/ai';
import { allowed, applyPreferredTerms, headingCase, type DraftedSection, type SectionInput } from '../domain/composer.js';
import type { Guidelines } from '../domain/settings.js';

/**
 * Drafts a piece through an OpenAI-compatible chat model: the brand kit's voice
 * and rules in the system message, the sections and their numbered passages in
 * the user message, and [n] citations asked for after every sentence. The
 * reply's sentences keep the passages they cite; the fact checker judges them
 * afterwards like any other draft.
 */

function systemMessage(g: Guidelines): string {
  const lines = [
    'You write content for an organization using only the numbered source passages you are given.',
    'After every sentence put the number of the passage that supports it, like [2]. Never state a fact that is not in the passages.',
    'Write each section under a line "## <section title>" exactly as given, in the order given. No other headings, no preamble.',
  ];
  if (g.voice) lines.push(`Voice: ${g.voice}`);
  if (g.tone) lines.push(`Tone: ${g.tone}`);
  if (g.persona) lines.push(`Persona: ${g.persona}`);
  if (g.audience) lines.push(`Audience: ${g.audience}`);
  if (g.reading_level) lines.push(`Reading level: ${g.reading_level}`);
  if (g.do_rules?.length) lines.push(`Do: ${g.do_rules.join('; ')}`);
  if (g.dont_rules?.length) lines.push(`Do not: ${g.dont_rules.join('; ')}`);
  if (g.banned_terms?.length) lines.push(`Never use these terms: ${g.banned_terms.join(', ')}`);
  if (g.preferred_terms?.length)
    lines.push(
      `Preferred terms: ${g.preferred_terms.map((p) => `"${p.term}" rather than ${p.instead_of.map((a) => `"${a}"`).join(', ')}`).join('; ')}`,
    );
  if (g.formatting?.max_sentence_words) lines.push(`Keep sentences under ${g.formatting.max_sentence_words} words.`);
  if (g.example_passages?.length) lines.push(`Examples of the house style:\n${g.example_passages.map((e) => `> ${e}`).join('\n')}`);
  return lines.join('\n');
}

const CITES = /\[(\d+(?:\s*,\s*\d+)*)\]/g;

export async function draftWithLlm(
  llm: Llm,
  sections: SectionInput[],
  guidelines: Guidelines,
  brief: { title: string; instructions?: string | undefined; max_words: number },
): Promise<DraftedSection[]> {
  // One numbering over every section's passages, so a sentence may cite any of them.
  const all = sections.flatMap((s) => s.passages);
  const unique = [...new Map(all.map((p) => [p.chunk_id, p])).values()];
  const sources = unique.map((p, i) => `[${i + 1}] ${p.title ? `${p.title}: ` : ''}${p.text.replace(/\s+/g, ' ').trim()}`).join('\n\n');
  const outline = sections
    .map((s) => `## ${headingCase(s.spec.title, guidelines)}${s.spec.instructions ? `\n(${s.spec.instructions})` : ''}`)
    .join('\n');
  const reply = await llm.complete([
    { role: 'system', content: systemMessage(guidelines) },
    {
      role: 'user',
      content:
        `Sources:\n${sources}\n\nWrite: ${brief.title}\n` +
        (brief.instructions ? `Instructions: ${brief.instructions}\n` : '') +
        `At most ${brief.max_words} words in all.\n\nSections:\n${outline}`,
    },
  ]);

  // Split the reply at the section headings it was asked to write.
  const bodies = new Map<string, string>();
  let current: string | null = null;
  for (const line of reply.split(/\r?\n/)) {
    const heading = /^#{1,6}\s+(.+?)\s*$/.exec(line);
    if (heading) {
      current = heading[1]!.trim().toLowerCase();
      bodies.set(current, '');
    } else if (current !== null) bodies.set(current, `${bodies.get(current)}\n${line}`);
  }
  return sections.map((section, i) => {
    const title = headingCase(section.spec.title, guidelines);
    const body =
      bodies.get(title.toLowerCase()) ?? bodies.get(section.spec.title.toLowerCase()) ?? (i === 0 && bodies.size === 0 ? reply : '');
    // Line by line: a line never runs into the next one.
    const sentences = body
      .split(/\n+/)
      .flatMap((line) => splitSentences(line.replace(/^\s*([-*+]|\d+[.)])\s+/, '')))
      .filter((raw) => /\p{L}/u.test(raw.replace(CITES, '')))
      .map((raw) => {
        const numbers = [...raw.matchAll(CITES)].flatMap((m) => m[1]!.split(',').map((n) => Number(n.trim()) - 1));
        const text = applyPreferredTerms(raw.replace(/\s*\[\d+(?:\s*,\s*\d+)*\]/g, '').trim(), guidelines);
        const passage = unique[numbers.find((n) => n >= 0 && n < unique.length) ?? -1];
        // The quoted span: the passage's sentence that backs this one best.
        const passageSentences = passage ? splitSentences(passage.text) : [];
        const best = passage ? supportOf(text, passageSentences) : { chunk: -1, coverage: 0 };
        return { text, passage, quote: best.chunk >= 0 ? passageSentences[best.chunk]! : '' };
      })
      .filter((s) => s.text && allowed(s.text, guidelines));
    const passages = [...new Map(sentences.flatMap((s) => (s.passage ? [[s.passage.chunk_id, s.passage] as const] : []))).values()];
    return {
      section_id: section.section_id,
      title,
      passages,
      sentences: sentences.map((s) => ({ text: s.text, quote: s.quote, passage: s.passage ? passages.indexOf(s.passage) : -1 })),
    };
  });
}
