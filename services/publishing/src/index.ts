export { startPublishing, SERVICE_NAME, type RunningService } from './service.js';
export { publishingConfigSpec, type PublishingConfig } from './config.js';
export { publishingProjections } from './projections/index.js';
export { signWebhook, webhookHeaders } from './domain/signing.js';
export type { TxtResolver } from './app/domains.js';
