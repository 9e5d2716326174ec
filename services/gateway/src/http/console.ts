import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';

/**
 * The web console's built files at / (index.html and hashed assets). Only files
 * that exist get a route, so any other path still gets the router's plain-text
 * 404. The console is a client of the public API; it has no other way in.
 */
export async function registerConsole(app: FastifyInstance, dir: string): Promise<void> {
  const root = resolve(dir);
  if (!existsSync(join(root, 'index.html'))) throw new Error(`CONSOLE_DIR ${root} has no index.html: run npm run build -w @kb/console`);
  await app.register(async (scope) => {
    // Public files: each route says so, as the auth hook requires of every route.
    scope.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), auth: { credential: 'none' } };
    });
    await scope.register(fastifyStatic, {
      root,
      prefix: '/',
      wildcard: false,
      cacheControl: false,
      index: ['index.html'],
      setHeaders(res, path) {
        res.setHeader('x-content-type-options', 'nosniff');
        res.setHeader('referrer-policy', 'same-origin');
        // Hashed asset names never change content: cache them for a year; the page itself is revalidated.
        res.setHeader('cache-control', path.includes(`${join(root, 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
        if (path.endsWith('.html'))
          res.setHeader(
            'content-security-policy',
            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
          );
      },
    });
  });
}
