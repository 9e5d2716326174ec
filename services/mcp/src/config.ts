/** The MCP server's settings (it lives in the gateway package, which owns the routes its tools dispatch to). */
export { mcpConfigSpec, startMcpServer, MCP_SERVICE_NAME, type McpConfig, type RunningMcp } from '@kb/gateway';
