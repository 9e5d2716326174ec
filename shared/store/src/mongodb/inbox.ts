import type { ClientSession, Db } from 'mongodb';
import { insertIfAbsent, type StoredDoc } from './documents.js';
import { INBOX } from './schema.js';

/** Consumer inbox: one document per (consumer, event id), written in the consumer's transaction. */
export function inboxOps(db: Db, now: () => string) {
  const inbox = db.collection<StoredDoc>(INBOX);
  return {
    /** False when the event was already recorded for this consumer. */
    markProcessed(consumer: string, eventId: string, session: ClientSession): Promise<boolean> {
      return insertIfAbsent(inbox, `${consumer}:${eventId}`, { consumer, event_id: eventId, processed_at: now() }, session);
    },
  };
}
