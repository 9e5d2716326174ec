import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { brandKitRoutes, BrandKit, Guidelines } from './generation/brand-kit.js';
import { builderRoutes } from './generation/builder.js';
import { contentTypeRoutes, ContentType, ProductLine } from './generation/content-types.js';
import { draftRoutes, Draft } from './generation/drafts.js';
import { engineRoutes } from './generation/engine.js';
import { generateRoutes, GenerateResult } from './generation/generate.js';
import { runRoutes, Run } from './generation/runs.js';
import { generationCalls, type GenerationClients } from './generation/support.js';
import { verifyRoutes, VerifyResult } from './generation/verify.js';

/**
 * Verified generation, served by the generation service: brand kit, content
 * types and product lines, runs, drafts, the fact checker, /generate, the
 * builder and the content engine (one file per resource under generation/).
 */
export function generationRoutes(clients: GenerationClients): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Shared by several resources' responses (referenced by $id).
    for (const schema of [GenerateResult, Guidelines, BrandKit, ContentType, ProductLine, Run, Draft, VerifyResult]) app.addSchema(schema);
    const calls = generationCalls(clients);
    brandKitRoutes(app, calls);
    contentTypeRoutes(app, calls);
    runRoutes(app, calls);
    draftRoutes(app, calls);
    verifyRoutes(app, calls);
    generateRoutes(app, calls);
    builderRoutes(app, calls);
    engineRoutes(app, calls);
  };
}
