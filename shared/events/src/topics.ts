/** One topic per producing service; the message key is always the org_id. */
export const topics = {
  gateway: 'gateway.events',
  knowledgeBase: 'knowledge-base.events',
  ingest: 'ingest.events',
  generation: 'generation.events',
  publishing: 'publishing.events',
  analytics: 'analytics.events',
  /** Collected AI answers, folded by analytics into daily counts. */
  answers: 'answers',
} as const;

export type Topic = (typeof topics)[keyof typeof topics];

/** Where a consumer parks a message it can never handle (non-retriable failure). */
export const deadLetterTopic = (topic: string): string => `${topic}.dlq`;
