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

/** Folder scope: a scoped key may publish only drafts drawn entirely from its folders (empty source list = the whole KB). */
export function withinScope(draft: DraftRevision, scope: string[] | null): boolean {
  if (scope === null) return true;
  if (draft.source_folder_ids.length === 0) return false;
  return draft.source_folder_ids.every((f) => scope.includes(f));
}
