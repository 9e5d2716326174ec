import type { DestinationAdapter } from './port.js';
import type { OutboundPolicy } from '@kb/platform/outbound';
import { closedConfig, destinationUrl } from './config.js';

/** POSTs the piece as signed JSON; the delivery is durable (deliveries table, retries, log). */
export function createWebhookAdapter(options: { policy: OutboundPolicy }): DestinationAdapter {
  return {
    type: 'webhook',
    secret: 'required',
    validateConfig: (config) =>
      closedConfig(config, { url: { required: true, check: destinationUrl(options.policy), hint: 'an http(s) URL' } }),
    async publish(_d, r) {
      const { draft } = r;
      return {
        delivery: {
          event_type: 'content.published',
          payload: {
            piece_id: draft.draft_id,
            revision: draft.revision,
            slug: r.slug,
            ...(r.canonical_url && { url: r.canonical_url }),
            title: draft.title,
            description: draft.description,
            content_kind: draft.content_kind,
            format: draft.format,
            body: draft.body,
            html: r.html,
            sections: draft.sections,
            target_prompt_ids: draft.target_prompt_ids,
            source_content_ids: draft.source_content_ids,
          },
        },
      };
    },
    unpublish: async (_d, p, mode) => ({
      delivery: { event_type: 'content.unpublished', payload: { piece_id: p.piece_id, revision: p.revision, mode } },
    }),
  };
}
