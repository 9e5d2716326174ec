import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { Timestamp, Uuid, errorResponses } from '../schemas.js';
import { callerOf } from '../auth-hook.js';
import { isAppError } from '@kb/platform';

/** Tags given by id or by name; a name the organization lacks becomes a new tag. */
export const TagRefs = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 50,
  description: 'Tags by id or by name; an unknown name creates the tag in the organization',
});
const TagSummary = Type.Object({ tag_id: Uuid, name: Type.String(), color: Type.Optional(Type.String()) });

const nodeFields = {
  kb_node_id: Uuid,
  type: Type.Union([Type.Literal('folder'), Type.Literal('content')]),
  parent_id: Type.Union([Uuid, Type.Null()], { description: 'null for the root folder' }),
  name: Type.String(),
  content_id: Type.Optional(Uuid),
  created_at: Timestamp,
  updated_at: Timestamp,
  tags: Type.Array(TagSummary, { description: "A folder's tags; a content node shows its content item's tags" }),
  processing_status: Type.Optional(
    Type.Union([Type.Literal('queued'), Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed')]),
  ),
  category_id: Type.Optional(Uuid),
  topic_id: Type.Optional(Uuid),
};
const KbNode = Type.Object(nodeFields, { $id: 'KbNode' });
const KbNodeWithChildren = Type.Object(
  {
    ...nodeFields,
    children: Type.Array(Type.Ref('KbNode'), { description: 'A page of the children: folders first, then content, each oldest first' }),
    children_total: Type.Integer({ description: 'Number of children in all pages' }),
  },
  { $id: 'KbNodeWithChildren' },
);

/** Children pages: limit 1 to 100, default 50 (spec 8: most Organization API lists). */
const ChildrenPage = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);
const NodeParams = Type.Object({ kb_node_id: Uuid });
const FolderName = Type.String({ minLength: 1, maxLength: 255 });
const CreateFolder = Type.Object(
  {
    name: FolderName,
    parent_id: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'Parent folder; absent or null: the root folder' })),
    tags: Type.Optional(TagRefs),
  },
  { additionalProperties: false },
);
const NodePatch = Type.Object(
  {
    name: Type.Optional(FolderName),
    parent_id: Type.Optional(Type.String({ format: 'uuid', description: 'Move under this folder' })),
    tags: Type.Optional(TagRefs),
  },
  { additionalProperties: false },
);
const DeleteQuery = Type.Object(
  { cascade: Type.Boolean({ default: false, description: 'Delete a non-empty folder with everything under it' }) },
  { additionalProperties: false },
);

interface NodeMessage {
  kb_node_id: string;
  type: 'folder' | 'content';
  parent_id?: string;
  name: string;
  content_id?: string;
  created_at: string;
  updated_at: string;
  tags?: { tag_id: string; name: string; color?: string }[];
  processing_status?: 'queued' | 'processing' | 'completed' | 'failed';
  category_id?: string;
  topic_id?: string;
}
interface NodeWithChildrenMessage {
  node: NodeMessage;
  children?: NodeMessage[];
  total_count?: number;
}

/** gRPC leaves an unset optional field out; the JSON API says null for the root's parent. */
const nodeJson = (n: NodeMessage) => ({ ...n, parent_id: n.parent_id ?? null, tags: n.tags ?? [] });
const withChildrenJson = (r: NodeWithChildrenMessage) => ({
  ...nodeJson(r.node),
  children: (r.children ?? []).map(nodeJson),
  children_total: r.total_count ?? 0,
});

const tags = ['Knowledge Base'];
const read = { auth: { credential: 'any', permission: 'read:kb' } } as const;
const write = { auth: { credential: 'any', permission: 'write:kb' } } as const;
const scopeNote =
  ' A folder-scoped API key gets 403 for a node outside its folders (a node is inside when it or an ancestor is a scope folder), and for the whole tree when its scope is empty.';

/** Organization API: the knowledge-base tree (spec 2.6, 5.2). */
export function kbTreeRoutes(tree: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(KbNode);
    app.addSchema(KbNodeWithChildren);

    app.get(
      '/org/kb/tree',
      {
        config: read,
        schema: {
          tags,
          summary: 'The root folder of the organization with a page of its children',
          description:
            'The root folder (parent_id null) is created on first use.' +
            scopeNote +
            ' The root is outside every scope that does not name it.',
          querystring: ChildrenPage,
          response: { 200: Type.Ref('KbNodeWithChildren'), ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => withChildrenJson(await tree.call<NodeWithChildrenMessage>('GetTree', req.query, callerOf(req))),
    );

    app.get(
      '/org/kb/scope',
      {
        config: read,
        schema: {
          tags,
          summary: 'The folders the caller may browse',
          description:
            'Where a credential may start browsing: for a folder-scoped API key or OAuth grant, its scope folders that still exist ' +
            '(each the top of a subtree it may read with GET /org/kb/nodes/:kb_node_id); for any other credential, the root. ' +
            'folder_scope is the scope as recorded (null: the whole knowledge base).',
          response: {
            200: Type.Object({
              folder_scope: Type.Union([Type.Array(Uuid), Type.Null()]),
              items: Type.Array(Type.Ref('KbNode')),
            }),
            ...errorResponses(401, 403),
          },
        },
      },
      async (req) => {
        const caller = callerOf(req);
        if (caller.folder_scope === null) {
          const top = await tree.call<NodeWithChildrenMessage>('GetTree', { limit: 1, offset: 0 }, caller);
          return { folder_scope: null, items: [nodeJson(top.node)] };
        }
        const found = await Promise.all(
          caller.folder_scope.map((kb_node_id) =>
            tree
              .call<NodeWithChildrenMessage>('GetNode', { kb_node_id, limit: 1, offset: 0 }, caller)
              .then((r) => nodeJson(r.node))
              // A scope folder deleted since is simply not there.
              .catch((err: unknown) => {
                if (isAppError(err) && err.httpStatus === 404) return undefined;
                throw err;
              }),
          ),
        );
        return { folder_scope: caller.folder_scope, items: found.filter((n) => n !== undefined) };
      },
    );

    app.get(
      '/org/kb/nodes/:kb_node_id',
      {
        config: read,
        schema: {
          tags,
          summary: 'A node with a page of its children',
          description: scopeNote.trim(),
          params: NodeParams,
          querystring: ChildrenPage,
          response: { 200: Type.Ref('KbNodeWithChildren'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => withChildrenJson(await tree.call<NodeWithChildrenMessage>('GetNode', { ...req.params, ...req.query }, callerOf(req))),
    );

    app.get(
      '/org/kb/nodes/:kb_node_id/path',
      {
        config: read,
        schema: {
          tags,
          summary: 'The path to a node, root first',
          description: 'A folder-scoped key sees the path from its scope folder down.' + scopeNote,
          params: NodeParams,
          response: { 200: Type.Array(Type.Ref('KbNode')), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => (await tree.call<{ nodes?: NodeMessage[] }>('GetPath', req.params, callerOf(req))).nodes?.map(nodeJson) ?? [],
    );

    app.post(
      '/org/kb/folders',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create a folder',
          description: 'Under parent_id, or under the root folder when absent. 400 when the parent is a content node.' + scopeNote,
          body: CreateFolder,
          response: { 201: Type.Ref('KbNode'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { parent_id, ...rest } = req.body;
        const message = { ...rest, ...(parent_id ? { parent_id } : {}) };
        return reply.status(201).send(nodeJson(await tree.call<NodeMessage>('CreateFolder', message, callerOf(req))));
      },
    );

    app.patch(
      '/org/kb/nodes/:kb_node_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Rename, move or retag a node',
          description:
            'Only the fields sent change. parent_id moves the node under that folder: 409 when it is the node itself or inside ' +
            "the node's subtree, or when the node is the root. tags replaces the node's tags (a content node's are its content item's)." +
            scopeNote +
            ' Both the node and the new parent must be inside the scope.',
          params: NodeParams,
          body: NodePatch,
          response: { 200: Type.Ref('KbNode'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => {
        const { tags: tagRefs, ...rest } = req.body as Static<typeof NodePatch>;
        const message = { ...rest, ...req.params, ...(tagRefs !== undefined && { set_tags: true, tags: tagRefs }) };
        return nodeJson(await tree.call<NodeMessage>('UpdateNode', message, callerOf(req)));
      },
    );

    app.delete(
      '/org/kb/nodes/:kb_node_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a node',
          description:
            'A folder that is not empty is 409 unless cascade=true, which deletes everything under it. The root folder cannot be ' +
            'deleted (409). Deleting a content node (or a folder holding content, with cascade) also deletes the content items and ' +
            'their original files, shortly after (asynchronously).' +
            scopeNote,
          params: NodeParams,
          querystring: DeleteQuery,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        await tree.call('DeleteNode', { ...req.params, cascade: req.query.cascade }, callerOf(req));
        return reply.status(204).send(null);
      },
    );
  };
}
