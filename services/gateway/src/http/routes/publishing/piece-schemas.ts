import { Type } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp, Uuid } from '../../schemas.js';
import { Open } from './support.js';

/** The content lifecycle's documents: a piece with its publications and history, publish results, the queue, outcomes. */

const Sentence = Open({ section_id: Type.String(), index: Type.Integer(), text: Type.String(), verdict: Type.String() });
const Publication = Open({
  destination_id: Uuid,
  type: Type.String(),
  status: Type.Union(
    ['pending', 'live', 'failed', 'unpublished', 'deleted'].map((s) => Type.Literal(s)),
    {
      description:
        'pending: handed to a destination that has not acknowledged it yet (a webhook, retried); live: acknowledged; failed: its delivery ran out of attempts',
    },
  ),
  revision: Type.Integer({ description: 'the revision the destination shows (pending: the one on its way)' }),
  pending_revision: Type.Optional(Type.Integer({ description: 'live at `revision`, with this newer revision on its way' })),
  error: Type.Optional(Type.String({ description: 'the last delivery failure' })),
  url: Type.Union([Type.String(), Type.Null()]),
  published_at: Timestamp,
  updated_at: Timestamp,
});
const HistoryEntry = Open({
  event: Type.String(),
  actor: Type.String(),
  at: Timestamp,
  revision: Type.Integer(),
  comment: Type.Optional(Type.String()),
  destination_id: Type.Optional(Uuid),
  error: Type.Optional(Type.String()),
});
export const PieceStatus = Type.Union(
  ['draft', 'in_review', 'approved', 'rejected', 'publishing', 'published', 'publish_failed', 'unpublished'].map((s) => Type.Literal(s)),
  {
    description:
      'the review (draft, in_review, approved, rejected) or where the piece stands on destinations: publishing (a destination has not acknowledged it yet), published (live on at least one), publish_failed (its deliveries failed and it is live nowhere), unpublished',
  },
);
export const Piece = Open(
  {
    piece_id: Uuid,
    revision: Type.Integer(),
    status: PieceStatus,
    title: Type.String(),
    description: Type.String(),
    content_kind: Type.String(),
    format: Type.String(),
    body: Type.String(),
    sections: Type.Array(Type.Unknown()),
    verification: Type.String(),
    target_prompt_ids: Type.Array(Uuid),
    source_folder_ids: Type.Array(Uuid),
    stale_sources: Type.Array(Type.Unknown()),
    publishable: Type.Boolean({ description: 'every factual sentence supported and no stale source: the publish gate' }),
    unsupported_sentences: Type.Array(Sentence),
    reviewer: Type.Union([Type.String(), Type.Null()]),
    review_comment: Type.Union([Type.String(), Type.Null()]),
    published_at: NullableTimestamp,
    publications: Type.Array(Publication),
    history: Type.Array(HistoryEntry),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  'Piece',
);
export const PublishResult = Open({
  destination_id: Uuid,
  type: Type.String(),
  result: Type.Union(
    ['published', 'pending', 'unchanged', 'failed', 'would_publish', 'would_fail'].map((r) => Type.Literal(r)),
    {
      description:
        'published: live (the destination acknowledged it); pending: a webhook destination has not acknowledged it yet (its delivery is retried; the piece goes live when it succeeds, or publish_failed when it runs out of attempts); failed: not published there. would_publish and would_fail: a dry run (would_fail: the destination configuration is not usable, see error)',
    },
  ),
  error: Type.Optional(Type.String({ description: 'why the destination failed, or the last attempt of a pending delivery failed' })),
  delivery_id: Type.Optional(Uuid),
  attempts: Type.Optional(Type.Integer({ description: 'delivery attempts made so far (webhook destinations)' })),
  next_attempt_at: Type.Optional(Type.String({ format: 'date-time', description: 'when a pending delivery is tried again' })),
  name: Type.Optional(Type.String({ description: 'dry run: the destination name' })),
  slug: Type.Optional(Type.String({ description: 'dry run: the page slug it would have' })),
  url: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: 'dry run: the URL it would have, when known before publishing' }),
  ),
});
export const QueueItem = Open({
  piece_id: Uuid,
  title: Type.String(),
  status: PieceStatus,
  waiting_for: Type.String(),
  waiting_since: Timestamp,
  revision: Type.Integer(),
  publishable: Type.Boolean(),
});
const Figures = Open({
  answer_count: Type.Integer(),
  mention_rate: Type.Union([Type.Number(), Type.Null()]),
  citation_rate: Type.Union([Type.Number(), Type.Null()]),
  share_of_voice: Type.Union([Type.Number(), Type.Null()]),
  win_rate: Type.Union([Type.Number(), Type.Null()]),
  loss_rate: Type.Union([Type.Number(), Type.Null()]),
});
const Window = Type.Object({ from: Type.String(), to: Type.String() });
export const Outcome = Open(
  {
    piece_id: Uuid,
    title: Type.String(),
    published_at: Timestamp,
    window_days: Type.Integer(),
    before_window: Window,
    after_window: Window,
    prompts: Type.Array(
      Open({
        prompt_id: Uuid,
        before: Figures,
        after: Figures,
        movement: Type.Union([Type.Literal('won'), Type.Literal('lost'), Type.Literal('unchanged'), Type.Literal('no_data')]),
      }),
    ),
    moved: Type.Boolean(),
  },
  'PieceOutcome',
);

export const PieceParams = Type.Object({ piece_id: Uuid });
export const Comment = Type.String({ minLength: 1, maxLength: 5000 });
export const DestinationIds = Type.Array(Uuid, {
  maxItems: 50,
  description: 'destinations to publish to; omitted or empty: the default shared set',
});
