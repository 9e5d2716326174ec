import { useState } from 'preact/hooks';
import type { Api } from '../api';
import { useLoad } from '../hooks';
import type { KbNode, KbNodeWithChildren } from '../types';

/**
 * The knowledge-base folder tree, loaded a level at a time. Keyboard: every
 * folder is a button (Enter selects, the toggle expands), in document order.
 * With `checked`, folders carry checkboxes (API key folder scopes).
 */
export function FolderTree(props: {
  api: Api;
  selected?: string | undefined;
  onSelect?: (node: KbNode) => void;
  checked?: Set<string>;
  onCheck?: (id: string, on: boolean) => void;
  version?: number;
}) {
  const root = useLoad(() => props.api.request<KbNodeWithChildren>('GET', '/org/kb/tree'), [props.version]);
  if (root.error) return <p class="error">{root.error.message}</p>;
  if (!root.data) return <p aria-busy="true">Loading folders…</p>;
  return (
    <ul class="tree" role="tree" aria-label="Folders">
      <FolderItem {...props} node={root.data} initial={root.data.children} expandedInitially />
    </ul>
  );
}

function FolderItem(props: {
  api: Api;
  node: KbNode;
  initial?: KbNode[];
  expandedInitially?: boolean;
  selected?: string | undefined;
  onSelect?: (node: KbNode) => void;
  checked?: Set<string>;
  onCheck?: (id: string, on: boolean) => void;
  version?: number;
}) {
  const [expanded, setExpanded] = useState(props.expandedInitially ?? false);
  const children = useLoad(
    async () =>
      expanded
        ? props.initial && props.version === undefined
          ? props.initial
          : (await props.api.request<KbNodeWithChildren>('GET', `/org/kb/nodes/${props.node.kb_node_id}?limit=100`)).children
        : [],
    [expanded, props.node.kb_node_id, props.version],
  );
  const folders = (children.data ?? []).filter((c) => c.type === 'folder');
  const isRoot = props.node.parent_id === null;
  return (
    <li role="treeitem" aria-expanded={expanded} aria-selected={props.selected === props.node.kb_node_id}>
      <div class="tree-row">
        <button
          type="button"
          class="toggle"
          aria-label={`${expanded ? 'Collapse' : 'Expand'} ${props.node.name}`}
          onClick={() => setExpanded(!expanded)}
        >
          {expanded ? '▾' : '▸'}
        </button>
        {props.checked && !isRoot ? (
          <label>
            <input
              type="checkbox"
              checked={props.checked.has(props.node.kb_node_id)}
              onChange={(e) => props.onCheck?.(props.node.kb_node_id, (e.target as HTMLInputElement).checked)}
            />{' '}
            {props.node.name}
          </label>
        ) : (
          <button
            type="button"
            class={`node ${props.selected === props.node.kb_node_id ? 'current' : ''}`}
            onClick={() => props.onSelect?.(props.node)}
          >
            {isRoot ? 'All content' : props.node.name}
          </button>
        )}
      </div>
      {expanded && folders.length > 0 && (
        <ul role="group">
          {folders.map((f) => (
            <FolderItem
              key={f.kb_node_id}
              api={props.api}
              node={f}
              selected={props.selected}
              {...(props.onSelect && { onSelect: props.onSelect })}
              {...(props.checked && { checked: props.checked })}
              {...(props.onCheck && { onCheck: props.onCheck })}
              {...(props.version !== undefined && { version: props.version })}
            />
          ))}
        </ul>
      )}
    </li>
  );
}
