import type { FastifyInstance } from 'fastify';
import type { ServiceClients } from '../../clients.js';
import type { IdentityService } from '../../app/identity.js';
import type { OrganizationService } from '../../app/organizations.js';
import type { ApiKeyService } from '../../app/api-keys.js';
import type { CreditsService } from '../../app/credits.js';
import type { LoginThrottle } from '../../app/login-throttle.js';
import { identityRoutes } from './identity.js';
import { categoryRoutes } from './categories.js';
import { analyticsReportRoutes } from './analytics-reports.js';
import { analyticsAnswerRoutes } from './analytics-answers.js';
import { analyticsSettingsRoutes } from './analytics-settings.js';
import { trackedSourceRoutes } from './tracked-sources.js';
import { competitorRoutes } from './competitors.js';
import { runConfigurationRoutes } from './run-config.js';
import { searchRoutes } from './search.js';
import { promptRoutes } from './prompts.js';
import { kbTreeRoutes } from './kb-tree.js';
import { tagRoutes } from './tags.js';
import { intakeRoutes } from './intake.js';
import { contentRoutes } from './content.js';
import { generationRoutes } from './generation.js';
import { publishingRoutes } from './publishing.js';
import type { UploadBudget } from '../intake-support.js';

export interface RouteDeps {
  clients: ServiceClients;
  identity: IdentityService;
  organizations: OrganizationService;
  apiKeys: ApiKeyService;
  credits: CreditsService;
  loginThrottle: LoginThrottle;
  /** Largest uploaded file in bytes. */
  maxUploadBytes: number;
  /** A publishing write went through: hosted pages cached by this gateway are stale. */
  onSiteChange?: () => void;
  /** In-flight and per-request byte budgets of uploads, shared by every multipart route. */
  uploadBudget: UploadBudget;
}

/** Every feature area's routes, registered under /api/v1. A new area adds one line. */
export async function registerRoutes(api: FastifyInstance, deps: RouteDeps): Promise<void> {
  await api.register(categoryRoutes(deps.clients.categories));
  await api.register(analyticsReportRoutes(deps.clients.analyticsReports));
  await api.register(analyticsAnswerRoutes(deps.clients.analyticsAnswers, deps.clients.analyticsReports));
  await api.register(analyticsSettingsRoutes(deps.clients.runConfiguration));
  await api.register(trackedSourceRoutes(deps.clients.trackedSources));
  await api.register(competitorRoutes(deps.clients.competitors));
  await api.register(runConfigurationRoutes(deps.clients.runConfiguration));
  await api.register(kbTreeRoutes(deps.clients.kbTree));
  await api.register(tagRoutes(deps.clients.tags));
  await api.register(identityRoutes(deps));
  await api.register(searchRoutes(deps.clients.search));
  await api.register(promptRoutes(deps.clients.prompts));
  await api.register(intakeRoutes(deps.clients, deps.maxUploadBytes, deps.uploadBudget));
  await api.register(contentRoutes(deps.clients, deps.maxUploadBytes, deps.uploadBudget));
  await api.register(generationRoutes(deps.clients));
  await api.register(
    publishingRoutes(
      { content: deps.clients.publishingContent, destinations: deps.clients.destinations, webhooks: deps.clients.webhooks },
      deps.onSiteChange,
    ),
  );
}
