/** Internals the benchmark under test/bench drives directly (the same code the service runs). */
import { analyticsProjections } from './projections/index.js';
import { ANALYTICS_STORE_FILE } from './config.js';
import { createAnswersService } from './app/answers.js';
import { createReportsService } from './app/reports.js';
import { createSettingsService } from './app/settings.js';
import { createCompetitorsService } from './app/competitors.js';
import { addFacts, addSourceFacts, countsOf, emptyCounts, emptySourceCounts, mergeCounts } from './domain/counts.js';
import { answerFacts } from './domain/facts.js';
import { addToRows } from './projections/answers.js';
import { createFoldThread } from './projections/fold-thread.js';
import { addCompact, compactOf } from './projections/source-rows.js';
import { addOutcomeColumns } from './projections/outcome-rows.js';
import { packCell, unpackCell } from './projections/prompt-cells.js';
import { sealOpenDay } from './projections/open-day.js';
import { COUNT_EXTENTS, DAILY_COUNTS, DAILY_SOURCES, PROMPTS, PROMPT_COUNTS, PROMPT_OUTCOMES } from './projections/collections.js';

export const analyticsBench = {
  ANALYTICS_STORE_FILE,
  analyticsProjections,
  createAnswersService,
  createFoldThread,
  createReportsService,
  createSettingsService,
  createCompetitorsService,
  addFacts,
  addSourceFacts,
  emptyCounts,
  emptySourceCounts,
  mergeCounts,
  countsOf,
  answerFacts,
  addToRows,
  addCompact,
  compactOf,
  addOutcomeColumns,
  packCell,
  unpackCell,
  sealOpenDay,
  COUNT_EXTENTS,
  DAILY_COUNTS,
  DAILY_SOURCES,
  PROMPT_OUTCOMES,
  PROMPT_COUNTS,
  PROMPTS,
};
