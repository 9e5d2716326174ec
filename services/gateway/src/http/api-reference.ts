import type { FastifyInstance } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';

/** Where the browsable API reference lives, beside the OpenAPI document it renders. */
export const API_REFERENCE_PATH = '/api/v1/docs';

/**
 * A browsable API reference (Swagger UI) over the service's own OpenAPI document, at
 * /api/v1/docs. Its scripts and styles ship in the package and are served from here (no
 * CDN), so it works offline; "Try it out" calls this service with the key the reader gives.
 * Public, as /api/v1/openapi.json is.
 */
export async function registerApiReference(app: FastifyInstance): Promise<void> {
  await app.register(async (scope) => {
    // Public pages: each route says so, as the auth hook requires of every route.
    scope.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), auth: { credential: 'none' } };
    });
    await scope.register(swaggerUi, {
      routePrefix: API_REFERENCE_PATH,
      staticCSP: true,
      uiConfig: { deepLinking: true, docExpansion: 'list', persistAuthorization: false, tryItOutEnabled: false },
    });
  });
}
