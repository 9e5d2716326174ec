/** The shapes of the public API the console reads (a subset of each response). */
export type ProcessingStatus = 'queued' | 'processing' | 'completed' | 'failed';

export interface Ratio {
  value: number | null;
  display: string;
}

export interface KbNode {
  kb_node_id: string;
  type: 'folder' | 'content';
  parent_id: string | null;
  name: string;
  content_id?: string;
  processing_status?: ProcessingStatus;
  tags: { tag_id: string; name: string }[];
}

export interface KbNodeWithChildren extends KbNode {
  children: KbNode[];
  children_total: number;
}

export interface ContentVersion {
  version_id: string;
  version_num: number;
  title: string;
  processing_status: ProcessingStatus;
  attempts: number;
  chunk_count?: number;
  characters?: number;
  created_at: string;
  filename?: string;
  format?: string;
  failure_reason?: string;
}

export interface ContentItem {
  id: string;
  title: string;
  type: string;
  version_num: number;
  version_id: string;
  processing_status: ProcessingStatus;
  attempts: number;
  failure_reason?: string;
  filename?: string;
  format?: string;
  created_at: string;
  updated_at: string;
  versions?: ContentVersion[];
}

export interface Chunk {
  chunk_index: number;
  text: string;
  page?: number;
  sheet?: string;
  slide?: number;
  heading_path?: string[];
}

export interface SearchChunk {
  content_id: string;
  version_id: string;
  chunk_index: number;
  chunk_text: string;
  score: number;
  title: string;
}

export interface SearchAnswer {
  query: string;
  answer: string;
  answered: boolean;
  citations: { n: number; content_id: string; version_id: string; chunk_index: number; title: string }[];
  context: SearchChunk[];
  total_results: number;
  processing_time_ms: number;
}

export interface Totals {
  answer_count: number;
  cited_run_count: number;
  cited_total: number;
  mentioned_run_count?: number;
  mention_total: number;
  brand_mention_total: number;
  tracked_mention_total: number;
  won_count: number;
  lost_count: number;
  tier_runs: Record<'primary' | 'tracked' | 'secondary', number>;
  tier_citations: Record<'primary' | 'tracked' | 'secondary', number>;
}

export interface Envelope {
  window: { from: string; to: string };
  totals: Totals;
  data_quality: string;
  notes: string[];
  definitions: Record<string, string>;
}

export interface Member {
  user_id: string;
  email: string;
  name: string;
  role_id: string;
  role_name: string;
  joined_at: string;
}

export interface ApiKey {
  key_id: string;
  name: string;
  hint: string;
  folder_scope: string[] | null;
  created_at: string;
  last_used_at: string | null;
}

export interface Me {
  user: { user_id: string; email: string; name: string };
  organization: { org_id: string; name: string } | null;
  permissions: string[];
}
