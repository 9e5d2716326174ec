export { startAnalytics, SERVICE_NAME, type RunningService } from './service.js';
export { analyticsConfigSpec, ANALYTICS_STORE_FILE, type AnalyticsConfig } from './config.js';
export { analyticsProjections } from './projections/index.js';
export type { AnswerEngine } from './engines/port.js';
