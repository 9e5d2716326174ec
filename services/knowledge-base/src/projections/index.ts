import type { Projection } from '@kb/eventsourcing';
import { categoriesProjection } from './categories.js';

/** Every read model fed by this service's own events (the rebuild command replays these). */
export const knowledgeBaseProjections: Projection[] = [categoriesProjection];
