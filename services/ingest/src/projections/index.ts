import type { Projection } from '@kb/eventsourcing';
import { contentProjection } from './content.js';

/** Every read model fed by this service's own events (the rebuild command replays these). */
export const ingestProjections: Projection[] = [contentProjection];
