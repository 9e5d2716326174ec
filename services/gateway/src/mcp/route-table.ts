import { silentLogger } from '@kb/platform';
import { buildHttpApp, type RouteEntry } from '../http/app.js';

/**
 * The gateway's route table (with request schemas) without running a gateway:
 * an MCP server of its own, or on stdio, publishes the same tool schemas as
 * the gateway. The app is built only to read its routes (no handler runs), then closed.
 */
export async function gatewayRouteTable(): Promise<RouteEntry[]> {
  const unused = {} as never;
  const { app, routes } = await buildHttpApp({
    identity: unused,
    organizations: unused,
    apiKeys: unused,
    credits: unused,
    clients: unused,
    loginThrottle: unused,
    logger: silentLogger(),
  });
  await app.close();
  return routes;
}
