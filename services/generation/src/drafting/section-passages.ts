import type { EvidencePassage } from '@kb/ai';
import type { SectionInput } from '../domain/composer.js';
import type { SectionSpec } from '../domain/settings.js';

/** Passages retrieved per section. */
export const PASSAGES_PER_SECTION = 8;

/**
 * Each section's passages for a piece: the section's own title and instructions lead the query
 * (the retriever keeps the query's first 2000 characters), then the piece's subject; with several
 * sections the passages on the section's own words alone come first, so a section is drafted from
 * what answers its heading rather than from what answers the piece as a whole. A section with
 * instructions also gets what its title and the subject alone retrieve (up to half as many more).
 */
export async function retrieveSections(
  specs: SectionSpec[],
  subject: string,
  retrieve: (query: string, limit: number) => Promise<EvidencePassage[]>,
  onSection: (done: number) => Promise<void> = async () => undefined,
): Promise<SectionInput[]> {
  const sections: SectionInput[] = [];
  for (const [i, spec] of specs.entries()) {
    const own = [spec.title, spec.instructions].filter(Boolean).join(' ');
    const query = [own, subject].filter(Boolean).join(' ');
    const all = await retrieve(query, PASSAGES_PER_SECTION);
    const first = specs.length > 1 ? await retrieve(own, PASSAGES_PER_SECTION / 2) : [];
    // Instructions add to what the title alone finds, never replace it: more detail never draws on less.
    const titled = spec.instructions ? await retrieve([spec.title, subject].filter(Boolean).join(' '), PASSAGES_PER_SECTION / 2) : [];
    const passages: EvidencePassage[] = [];
    for (const p of [...first, ...all.slice(0, PASSAGES_PER_SECTION / 2), ...titled, ...all.slice(PASSAGES_PER_SECTION / 2)])
      if (!passages.some((x) => x.chunk_id === p.chunk_id)) passages.push(p);
    passages.splice(PASSAGES_PER_SECTION + (spec.instructions ? PASSAGES_PER_SECTION / 2 : 0));
    sections.push({ section_id: `s${i + 1}`, spec, query, passages });
    await onSection(i + 1);
  }
  return sections;
}
