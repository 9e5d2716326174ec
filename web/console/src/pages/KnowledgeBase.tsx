import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Api } from '../api';
import { useInterval, useLoad } from '../hooks';
import { FolderTree } from '../components/Tree';
import { ErrorNote, formatDate, Section, StatusBadge } from '../components/common';
import type { Chunk, ContentItem, KbNode, KbNodeWithChildren } from '../types';

interface UploadRow {
  key: string;
  file: File;
  sent: number;
  total: number;
  state: 'uploading' | 'accepted' | 'skipped' | 'error';
  message?: string;
  contentId?: string;
}

interface UploadResult {
  files: { filename: string; status: 'accepted' | 'skipped'; content_id?: string; reason?: string; existing_content_id?: string }[];
}

/** The folder tree, uploads with per-file progress, and the processing state of every item, live. */
export function KnowledgeBase({ api, contentId }: { api: Api; contentId?: string | undefined }) {
  const [folder, setFolder] = useState<KbNode>();
  const [version, setVersion] = useState(0);
  const [uploads, setUploads] = useState<UploadRow[]>([]);
  const [dragging, setDragging] = useState(false);
  const folderId = folder?.kb_node_id;
  const listing = useLoad(
    () => api.request<KbNodeWithChildren>('GET', folderId && folder?.parent_id ? `/org/kb/nodes/${folderId}?limit=100` : '/org/kb/tree'),
    [folderId, version],
  );
  const busy = (listing.data?.children ?? []).some((c) => c.processing_status === 'queued' || c.processing_status === 'processing');
  const kinds = useContentKinds(
    api,
    (listing.data?.children ?? []).flatMap((c) => (c.content_id ? [c.content_id] : [])),
  );
  useInterval(listing.reload, 1500, busy);

  const update = (key: string, patch: Partial<UploadRow>) =>
    setUploads((rows) => rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));

  const upload = async (files: File[]) => {
    // One call per file, so each has its own progress and outcome (the API takes up to 10 per call).
    const rows = files.map((file, i) => ({
      key: `${Date.now()}-${i}-${file.name}`,
      file,
      sent: 0,
      total: file.size,
      state: 'uploading' as const,
    }));
    setUploads((prev) => [...rows, ...prev]);
    await Promise.all(
      rows.map(async (row) => {
        const form = new FormData();
        if (folder?.parent_id) form.append('parent_id', folder.kb_node_id);
        form.append('files', row.file, row.file.name);
        try {
          const result = (await api.upload('/org/kb/upload', form, (sent, total) => update(row.key, { sent, total }))) as UploadResult;
          const f = result.files[0];
          update(row.key, {
            state: f?.status === 'skipped' ? 'skipped' : 'accepted',
            ...(f?.content_id && { contentId: f.content_id }),
            ...(f?.status === 'skipped' && { message: f.reason ?? 'Already in the knowledge base' }),
          });
        } catch (err) {
          // A file already in the knowledge base (same bytes) is a 422: it is there, not failed.
          if (err instanceof ApiError && err.code === 'all_duplicates')
            update(row.key, { state: 'skipped', message: 'already in the knowledge base' });
          else update(row.key, { state: 'error', message: (err as Error).message });
        }
      }),
    );
    listing.reload();
  };

  const createFolder = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get('name') ?? '').trim();
    if (!name) return;
    await api.request('POST', '/org/kb/folders', { name, ...(folder?.parent_id && { parent_id: folder.kb_node_id }) });
    form.reset();
    setVersion((v) => v + 1);
  };

  return (
    <div class="split">
      <nav class="card tree-panel" aria-label="Knowledge base folders">
        <h2>Folders</h2>
        <FolderTree api={api} selected={folderId} onSelect={setFolder} version={version} />
        <form class="inline" onSubmit={createFolder}>
          <label>
            New folder
            <input name="name" required maxLength={255} />
          </label>
          <button type="submit">Create</button>
        </form>
      </nav>
      <div class="stack">
        <Section title={folder?.parent_id ? `Folder: ${folder.name}` : 'All content'}>
          <div
            class={`dropzone ${dragging ? 'over' : ''}`}
            onDragOver={(e) => {
              e.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={(e) => {
              e.preventDefault();
              setDragging(false);
              void upload([...(e.dataTransfer?.files ?? [])]);
            }}
          >
            <p>Drop files here (PDF, Word, Excel, PowerPoint, HTML, CSV, JSON, XML, text) or</p>
            <label class="button">
              Choose files
              <input
                type="file"
                multiple
                class="visually-hidden"
                onChange={(e) => {
                  const input = e.target as HTMLInputElement;
                  void upload([...(input.files ?? [])]);
                  input.value = '';
                }}
              />
            </label>
          </div>
          {uploads.length > 0 && (
            <ul class="uploads" aria-label="Uploads" aria-live="polite">
              {uploads.map((u) => (
                <li key={u.key}>
                  <span class="name">{u.file.name}</span>
                  {u.state === 'uploading' ? (
                    <progress max={u.total || 1} value={u.sent} aria-label={`Uploading ${u.file.name}`} />
                  ) : (
                    <span class={`upload-${u.state}`}>
                      {u.state === 'accepted' ? 'Uploaded' : u.state === 'skipped' ? 'Skipped' : 'Failed'}
                      {u.message ? `: ${u.message}` : ''}
                    </span>
                  )}
                  {u.state === 'error' && (
                    <button type="button" onClick={() => void upload([u.file])}>
                      Retry
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )}
          <ErrorNote error={listing.error} />
          <table class="list">
            <caption class="visually-hidden">Items in this folder</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {(listing.data?.children ?? []).map((n) => (
                <tr key={n.kb_node_id}>
                  <td>
                    {n.type === 'content' && n.content_id ? (
                      <a href={`#/kb/content/${n.content_id}`}>{n.name}</a>
                    ) : (
                      <button type="button" class="link" onClick={() => setFolder(n)}>
                        {n.name}
                      </button>
                    )}
                  </td>
                  <td>{n.type === 'folder' ? 'Folder' : n.content_id ? (kinds.get(n.content_id) ?? 'Content') : 'Content'}</td>
                  <td>{n.processing_status ? <StatusBadge status={n.processing_status} /> : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {listing.data && listing.data.children.length === 0 && <p>Nothing here yet.</p>}
        </Section>
        {contentId && <ContentDetail api={api} contentId={contentId} onChanged={listing.reload} />}
      </div>
    </div>
  );
}

/** What a content item is, in a word: "Text" for raw text, else its file format ("PDF", "DOCX"). */
export const kindOfContent = (item: Pick<ContentItem, 'type' | 'format'>): string =>
  item.type === 'raw' ? 'Text' : item.format ? item.format.toUpperCase() : 'File';

/** The kind of each content item listed, asked once per item (the tree does not carry it). */
function useContentKinds(api: Api, ids: string[]): Map<string, string> {
  const [kinds, setKinds] = useState(new Map<string, string>());
  const asked = useRef(new Set<string>());
  useEffect(() => {
    const missing = ids.filter((id) => !asked.current.has(id));
    if (missing.length === 0) return;
    for (const id of missing) asked.current.add(id);
    void Promise.all(
      missing.map((id) =>
        api.request<ContentItem>('GET', `/org/kb/content/${id}`).then(
          (item) => [id, kindOfContent(item)] as const,
          () => undefined,
        ),
      ),
    ).then((found) => setKinds((prev) => new Map([...prev, ...found.filter((f) => f !== undefined)])));
  }, [ids.join(',')]);
  return kinds;
}

/** One content item: its versions (newest first), why it failed, and its chunks; opening one brings it into view. */
export function ContentDetail({ api, contentId, onChanged }: { api: Api; contentId: string; onChanged: () => void }) {
  const item = useLoad(() => api.request<ContentItem>('GET', `/org/kb/content/${contentId}`), [contentId]);
  const top = useRef<HTMLDivElement>(null);
  const loaded = item.data !== undefined;
  useEffect(() => {
    if (!loaded || !top.current) return;
    top.current.scrollIntoView?.({ block: 'start' });
  }, [contentId, loaded]);
  const [versionId, setVersionId] = useState<string>();
  const shown = versionId ?? item.data?.version_id;
  const chunks = useLoad(
    () =>
      shown
        ? api.request<{ chunks: Chunk[]; total_count: number }>('GET', `/org/kb/content/${contentId}/chunks?version_id=${shown}&limit=50`)
        : Promise.resolve(undefined),
    [contentId, shown, item.data?.processing_status],
  );
  const pending = item.data?.processing_status === 'queued' || item.data?.processing_status === 'processing';
  useInterval(
    () => {
      item.reload();
      onChanged();
    },
    1500,
    pending,
  );
  const retry = async (e: Event) => {
    const input = e.target as HTMLInputElement;
    const file = input.files?.[0];
    if (!file || !item.data) return;
    const form = new FormData();
    form.append('files', file, file.name);
    await api.upload('/org/kb/upload', form, () => {});
    input.value = '';
    onChanged();
  };
  if (item.error) return <ErrorNote error={item.error} />;
  if (!item.data) return <p aria-busy="true">Loading…</p>;
  const c = item.data;
  return (
    <div ref={top} class="content-detail">
      <Section title={c.title} actions={<a href="#/kb">Close</a>}>
        <p>
          <StatusBadge status={c.processing_status} /> version {c.version_num} · {kindOfContent(c)} · tried {c.attempts} time
          {c.attempts === 1 ? '' : 's'}
        </p>
        {c.processing_status === 'failed' && (
          <div class="failure" role="status">
            <p>
              <strong>Why it failed:</strong> {c.failure_reason ?? 'unknown'}
            </p>
            <label class="button">
              Upload a corrected file
              <input type="file" class="visually-hidden" onChange={(e) => void retry(e)} />
            </label>
          </div>
        )}
        <h3>Versions</h3>
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">State</th>
              <th scope="col">Chunks</th>
              <th scope="col">Added</th>
            </tr>
          </thead>
          <tbody>
            {(c.versions ?? []).map((v) => (
              <tr key={v.version_id} class={v.version_id === shown ? 'current' : ''}>
                <td>
                  <button type="button" class="link" onClick={() => setVersionId(v.version_id)} aria-pressed={v.version_id === shown}>
                    v{v.version_num} {v.filename ?? v.title}
                  </button>
                </td>
                <td>
                  <StatusBadge status={v.processing_status} />
                  {v.failure_reason ? ` ${v.failure_reason}` : ''}
                </td>
                <td>{v.chunk_count ?? '—'}</td>
                <td>{formatDate(v.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <h3>Chunks</h3>
        <ErrorNote error={chunks.error} />
        <ol class="chunks">
          {(chunks.data?.chunks ?? []).map((ch) => (
            <li key={ch.chunk_index} id={`chunk-${ch.chunk_index}`}>
              <p class="where">
                #{ch.chunk_index}
                {ch.page ? ` · page ${ch.page}` : ''}
                {ch.sheet ? ` · sheet ${ch.sheet}` : ''}
                {ch.slide ? ` · slide ${ch.slide}` : ''}
                {ch.heading_path?.length ? ` · ${ch.heading_path.join(' › ')}` : ''}
              </p>
              <p>{ch.text}</p>
            </li>
          ))}
        </ol>
      </Section>
    </div>
  );
}
