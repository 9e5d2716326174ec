import { applyHeapSettings, createLogger, createShutdown, loadConfigOrExit } from '@kb/platform';
import { MCP_SERVICE_NAME, mcpConfigSpec, startMcpServer } from './config.js';

applyHeapSettings('mcp');

/** The MCP server as its own process (its own container in compose and Kubernetes). */
const config = loadConfigOrExit(mcpConfigSpec, MCP_SERVICE_NAME);
const logger = createLogger({ level: config.LOG_LEVEL });
const mcp = await startMcpServer({ config, logger });
logger.info({ url: `${mcp.url}/mcp` }, 'MCP server listening');
const shutdown = createShutdown(logger);
shutdown.add(MCP_SERVICE_NAME, () => mcp.stop());
shutdown.onSignals();
