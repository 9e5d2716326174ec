import { errors } from '@kb/platform';

/**
 * Folder scope on drafts and runs: a folder-scoped caller sees only what was
 * drawn entirely from folders in its scope. The scope arrives expanded with its
 * subfolders (the gateway asks the knowledge-base tree), so membership is a
 * plain lookup. No source folder means the whole knowledge base: outside every
 * scope. The same rule refuses publishing such a piece.
 */
export function drawsWithin(sourceFolderIds: readonly string[], scope: readonly string[] | null): boolean {
  if (scope === null) return true;
  if (sourceFolderIds.length === 0) return false;
  const allowed = new Set(scope);
  return sourceFolderIds.every((f) => allowed.has(f));
}

/** 403 by id for what lies outside the caller's folders (lists leave it out instead). */
export function requireWithin(sourceFolderIds: readonly string[], scope: readonly string[] | null, what: string): void {
  if (!drawsWithin(sourceFolderIds, scope))
    throw errors.forbidden(`This key may not read ${what} drawn from outside its folders`, { code: 'folder_scope' });
}

/** The folders a run drew on: the ones it named, else the whole scope of the key that started it (none: the whole KB). */
export const runFolders = (run: { scope: { folder_ids: string[] }; caller_folder_scope: string[] | null }): string[] =>
  run.scope.folder_ids.length > 0 ? run.scope.folder_ids : (run.caller_folder_scope ?? []);
