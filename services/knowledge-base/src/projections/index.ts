import type { Projection } from '@kb/eventsourcing';
import { categoriesProjection } from './categories.js';
import { kbTreeProjection } from './kb-tree.js';
import { tagsProjection } from './tags.js';
import { searchQueriesProjection } from './search-queries.js';
import { promptsProjection } from './prompts.js';

/** Every read model fed by this service's own events (the rebuild command replays these). */
export const knowledgeBaseProjections: Projection[] = [
  categoriesProjection,
  kbTreeProjection,
  tagsProjection,
  searchQueriesProjection,
  promptsProjection,
];
