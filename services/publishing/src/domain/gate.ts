import type { DraftRevision } from '@kb/events';

export interface GateFailure {
  section_id: string;
  index: number;
  text: string;
  verdict: string;
}

export interface GateResult {
  ok: boolean;
  /** Factual sentences that are not supported. */
  sentences: GateFailure[];
  stale_sources: DraftRevision['stale_sources'];
}

/**
 * The publish gate: a piece can be approved or published only when every
 * factual sentence is supported by a citation and no cited source went stale.
 */
export function checkGate(draft: DraftRevision): GateResult {
  const sentences = draft.sections.flatMap((s) =>
    s.sentences
      .filter((x) => x.verdict === 'unsupported' || x.verdict === 'contradicted' || (x.verdict === 'supported' && x.citations.length === 0))
      .map((x) => ({ section_id: s.section_id, index: x.index, text: x.text, verdict: x.verdict })),
  );
  return { ok: sentences.length === 0 && draft.stale_sources.length === 0, sentences, stale_sources: draft.stale_sources };
}

/**
 * Folder scope: a scoped key may publish only drafts drawn entirely from its
 * folders or folders below them (an empty source list is the whole KB, never
 * inside a scope). `ancestors` gives a folder's ancestors, nearest first.
 */
export function withinScope(draft: DraftRevision, scope: string[] | null, ancestors: (folderId: string) => string[] = () => []): boolean {
  if (scope === null) return true;
  if (draft.source_folder_ids.length === 0) return false;
  const allowed = new Set(scope);
  return draft.source_folder_ids.every((f) => allowed.has(f) || ancestors(f).some((a) => allowed.has(a)));
}
