export { startIngest, SERVICE_NAME, type RunningService } from './service.js';
export { ingestConfigSpec, type IngestConfig } from './config.js';
export { ingestProjections } from './projections/index.js';
export { UPLOAD_FORMATS, MAX_FILES_PER_CALL } from './app/intake.js';
