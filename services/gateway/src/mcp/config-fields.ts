import { Type } from '@sinclair/typebox';

/** How /mcp is served: the same settings for the gateway's /mcp and for the separate mcp process. */
export const mcpServingFields = {
  MCP_RATE_LIMIT: Type.Integer({ minimum: 1, default: 60, description: 'MCP requests per window per API key or OAuth grant' }),
  MCP_RATE_WINDOW_MS: Type.Integer({ minimum: 100, default: 60000, description: 'the sliding window of MCP_RATE_LIMIT' }),
  MCP_SESSION_IDLE_SECONDS: Type.Integer({
    minimum: 10,
    default: 1800,
    description: 'an MCP session unused for this long is closed (the client starts a new one)',
  }),
  MCP_SESSIONS_PER_CREDENTIAL: Type.Integer({
    minimum: 1,
    default: 10,
    description: 'open MCP sessions per API key or OAuth grant; a new one closes the least recently used',
  }),
  MCP_JSON_RESPONSE: Type.Boolean({ default: false, description: 'answer MCP POSTs with JSON instead of an event stream' }),
  MCP_ALLOWED_ORIGINS: Type.Optional(
    Type.String({
      description: 'origins (scheme://host[:port], comma separated) whose pages may call /mcp besides its own; another Origin is 403',
    }),
  ),
  MCP_TOOLSETS: Type.Optional(
    Type.String({
      description:
        'MCP tool groups served, comma separated (search, kb, tracked_prompts, analytics, generation, publishing); all when unset',
    }),
  ),
  MCP_READ_ONLY: Type.Boolean({
    default: false,
    description: 'serve only the MCP tools that change nothing but credits and the search history',
  }),
};
