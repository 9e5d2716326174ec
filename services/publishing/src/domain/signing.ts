import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
 * A secret of the form `whsec_<base64>` signs with the decoded bytes; any other
 * secret signs with its UTF-8 bytes.
 */
export function secretBytes(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export function webhookHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signWebhook(secret, id, timestampSeconds, body),
  };
}
