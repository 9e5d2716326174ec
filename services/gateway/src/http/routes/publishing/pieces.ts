import { Type } from '@sinclair/typebox';
import { Uuid, errorResponses, OrgPagination } from '../../schemas.js';
import { analytics, publish, read, submitAuth, type App, type PublishingProxies } from './support.js';
import { Comment, DestinationIds, PieceParams, PieceStatus, PublishResult, QueueItem } from './piece-schemas.js';

/** Content: review (submit, approve, reject), the queue, publish and unpublish, and the closed loop's outcomes. */

export function pieceRoutes(app: App, { content }: PublishingProxies) {
  const tags = ['Content'];
  app.get(
    '/org/content/pieces',
    {
      config: read,
      schema: {
        tags,
        summary: 'List generated pieces',
        description: 'Drafts from generation with their review state, newest first; filter by status. Total in X-Total-Count.',
        querystring: Type.Object({ ...OrgPagination.properties, status: Type.Optional(PieceStatus) }, { additionalProperties: false }),
        response: { 200: Type.Array(Type.Ref('Piece')), ...errorResponses(400, 401, 403) },
      },
    },
    content('ListPieces', { list: true }),
  );
  app.get(
    '/org/content/review-queue',
    {
      config: read,
      schema: {
        tags,
        summary: 'Review queue',
        description:
          'What waits for whom: pieces in review (for their reviewer or anyone) and approved pieces waiting for a publisher, oldest first.',
        querystring: OrgPagination,
        response: { 200: Type.Array(QueueItem), ...errorResponses(400, 401, 403) },
      },
    },
    content('ReviewQueue', { list: true }),
  );
  app.get(
    '/org/content/pieces/:piece_id',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get a piece',
        params: PieceParams,
        response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    content('GetPiece'),
  );
  app.post(
    '/org/content/pieces/:piece_id/submit',
    {
      config: submitAuth,
      schema: {
        tags,
        summary: 'Send a piece to review',
        description: 'Optionally names the reviewer it waits for. 409 when it is already in review or published.',
        params: PieceParams,
        body: Type.Optional(
          Type.Object(
            { reviewer: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })), comment: Type.Optional(Comment) },
            { additionalProperties: false },
          ),
        ),
        response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    content('SubmitPiece'),
  );
  app.post(
    '/org/content/pieces/:piece_id/approve',
    {
      config: publish,
      schema: {
        tags,
        summary: 'Approve a piece',
        description: 'The publish gate: 422 naming the sentences when a factual sentence is not supported or a cited source is stale.',
        params: PieceParams,
        body: Type.Optional(Type.Object({ comment: Type.Optional(Comment) }, { additionalProperties: false })),
        response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404, 409, 422) },
      },
    },
    content('ApprovePiece'),
  );
  app.post(
    '/org/content/pieces/:piece_id/reject',
    {
      config: publish,
      schema: {
        tags,
        summary: 'Reject a piece',
        description: 'Needs a comment saying why.',
        params: PieceParams,
        body: Type.Object({ comment: Comment }, { additionalProperties: false }),
        response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    content('RejectPiece'),
  );
  app.post(
    '/org/content/pieces/:piece_id/publish',
    {
      config: publish,
      schema: {
        tags,
        summary: 'Publish a piece',
        description:
          'Publishes the approved revision of a piece to the named destinations, or to the default shared set. 409 not_approved when no revision was approved, revision_not_approved when the latest revision is not the approved one (submit it for review). The same revision on the same destination is left unchanged (idempotent). ' +
          'A webhook destination is live only once its receiver acknowledges the delivery: the call waits a few seconds for the first attempt, and answers pending for a receiver that has not answered yet; the delivery is retried, and the piece becomes published, or publish_failed with a content.publish_failed webhook when it runs out of attempts. ' +
          "422: the publish gate failed, or no publisher (no destination named and no default set). 502: a destination failed, or a webhook destination's first attempt failed (it is retried); details.results has every destination's result, the others committed. " +
          '403: a folder-scoped key and content drawn from outside its folders. ' +
          'dry_run: true makes every check of a real publish (permission, folder scope, the publish gate with its 422 naming the unsupported sentences, the destinations and their configuration) and answers what it would do (per destination: would_publish, unchanged or would_fail, the slug and URL) without calling a destination, recording an event or changing anything.',
        params: PieceParams,
        body: Type.Optional(
          Type.Object(
            {
              destination_ids: Type.Optional(DestinationIds),
              dry_run: Type.Optional(
                Type.Boolean({ description: 'check and answer what would be published, changing nothing (default false)' }),
              ),
            },
            { additionalProperties: false },
          ),
        ),
        response: {
          200: Type.Intersect([
            Type.Ref('Piece'),
            Type.Object({ results: Type.Array(PublishResult), dry_run: Type.Optional(Type.Boolean()) }),
          ]),
          ...errorResponses(400, 401, 403, 404, 409, 422, 502),
        },
      },
    },
    content('PublishPiece'),
  );
  app.post(
    '/org/content/pieces/:piece_id/unpublish',
    {
      config: publish,
      schema: {
        tags,
        summary: 'Unpublish a piece',
        description:
          'Takes it off the named destinations (default: every one it is live on). mode unpublish keeps a tombstone (hosted pages answer 410, WordPress posts become drafts); delete removes it. 409 when it is not live there; 502 when a destination fails.',
        params: PieceParams,
        body: Type.Optional(
          Type.Object(
            {
              destination_ids: Type.Optional(Type.Array(Uuid, { maxItems: 50 })),
              mode: Type.Optional(Type.Union([Type.Literal('unpublish'), Type.Literal('delete')])),
            },
            { additionalProperties: false },
          ),
        ),
        response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404, 409, 502) },
      },
    },
    content('UnpublishPiece'),
  );
  app.get(
    '/org/content/pieces/:piece_id/outcome',
    {
      config: analytics,
      schema: {
        tags,
        summary: 'Before and after figures of the prompts a piece targets',
        description:
          'Mention rate, citation rate, share of voice, win and loss rate of each target prompt over equal windows of whole UTC days before and after the day the piece was first published (the after window runs to today, at most 30 days). 409 when it was never published.',
        params: PieceParams,
        response: { 200: Type.Ref('PieceOutcome'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    content('PieceOutcome'),
  );
  app.get(
    '/org/content/outcomes',
    {
      config: analytics,
      schema: {
        tags,
        summary: 'Published pieces whose target prompts moved',
        response: { 200: Type.Object({ items: Type.Array(Type.Ref('PieceOutcome')) }), ...errorResponses(401, 403) },
      },
    },
    content('MovedPieces'),
  );
}
