import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { httpDispatcher } from './dispatcher.js';
import { gatewayRouteTable } from './route-table.js';
import { createMcpServer } from './server.js';
import { buildTools } from './tools.js';

/**
 * The MCP server on stdio for a local assistant: `npm run mcp -- --api-key KEY
 * [--gateway http://localhost:8080]`. Every tool call goes to the gateway's REST
 * API with that key (so its scope and credits apply). Nothing but MCP is written to stdout.
 */
const { values } = parseArgs({
  options: {
    'api-key': { type: 'string' },
    gateway: { type: 'string', default: process.env.KB_GATEWAY_URL ?? 'http://localhost:8080' },
  },
});
const apiKey = values['api-key'] ?? process.env.KB_API_KEY;
if (!apiKey) {
  process.stderr.write('Usage: npm run mcp -- --api-key <API key> [--gateway http://localhost:8080]\n');
  process.exit(2);
}
const server = createMcpServer({
  tools: buildTools(await gatewayRouteTable()),
  // No dispatch secret: an API key is a REST credential as it is.
  dispatcher: httpDispatcher(values.gateway!, ''),
  credential: { 'x-api-key': apiKey },
});
await server.connect(new StdioServerTransport());
process.stderr.write(`kb MCP server on stdio, calling ${values.gateway}\n`);
