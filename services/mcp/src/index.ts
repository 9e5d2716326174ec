export { mcpConfigSpec, startMcpServer, MCP_SERVICE_NAME, type McpConfig, type RunningMcp } from './config.js';
