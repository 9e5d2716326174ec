export { startGateway, gatewayProjections, SERVICE_NAME, type RunningGateway } from './service.js';
export { gatewayConfigSpec, type GatewayConfig } from './config.js';
export type { RouteEntry } from './http/app.js';
export type { RouteAuth } from './http/route-auth.js';
export { startMcpServer, mcpConfigSpec, MCP_SERVICE_NAME, type McpConfig, type RunningMcp } from './mcp/standalone.js';
export { registerHealth, grpcServing, type HealthDeps } from './http/health.js';
