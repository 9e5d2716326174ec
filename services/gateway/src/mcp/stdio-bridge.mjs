#!/usr/bin/env node
// The MCP server on stdio for a local assistant: a bridge to the gateway's /mcp.
// Plain JavaScript so that `node` runs it as it is (no build, no loader): it
// starts in well under a second and writes nothing but JSON-RPC to stdout.
// Every message goes to the gateway's MCP server over Streamable HTTP with the
// key from KB_API_KEY, so the tools, their results, the key's scope, credits and
// rate limit are exactly those of /mcp.
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const USAGE = `kb MCP server on stdio (a bridge to the gateway's /mcp)

Usage: KB_API_KEY=<API key> node services/gateway/src/mcp/stdio-bridge.mjs [options]

Options:
  --gateway <url>     the gateway (default: $KB_GATEWAY_URL or http://localhost:8080)
  --toolsets <list>   tool groups, comma separated: search, kb, tracked_prompts, analytics,
                      generation, publishing (default: $KB_MCP_TOOLSETS or all)
  --read-only         only tools that change nothing but credits and the search history
                      (default: $KB_MCP_READ_ONLY)
  -h, --help          this text
  -v, --version       the version

The API key is read from the environment (KB_API_KEY), never from the command line,
so that it shows neither in the process list nor in the assistant's logs.
Only JSON-RPC is written to stdout; messages for people go to stderr.
`;

const VERSION = '0.3.0';

/** @param {string} message */
const fail = (message) => {
  process.stderr.write(`kb-mcp: ${message}\n\n${USAGE}`);
  process.exit(2);
};

/** @type {{ values: Record<string, string | boolean | undefined> }} */
let parsed;
try {
  parsed = parseArgs({
    options: {
      gateway: { type: 'string' },
      toolsets: { type: 'string' },
      'read-only': { type: 'boolean' },
      'api-key': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  });
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (values.version) {
  process.stdout.write(`${VERSION}\n`);
  process.exit(0);
}
if (values['api-key'] !== undefined) fail('--api-key is not taken (it would show in the process list): set KB_API_KEY instead');
const apiKey = process.env.KB_API_KEY?.trim();
if (!apiKey) fail('set KB_API_KEY to an API key of your organization');

const gateway = String(values.gateway ?? process.env.KB_GATEWAY_URL ?? 'http://localhost:8080');
let endpoint;
try {
  endpoint = new URL('/mcp', gateway);
} catch {
  fail(`--gateway ${gateway} is not a URL`);
}
const toolsets = values.toolsets ?? process.env.KB_MCP_TOOLSETS;
const readOnly = values['read-only'] === true || /^(1|true|yes)$/i.test(process.env.KB_MCP_READ_ONLY ?? '');
if (toolsets) endpoint.searchParams.set('toolsets', String(toolsets));
if (readOnly) endpoint.searchParams.set('read_only', 'true');

const upstream = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { 'x-api-key': apiKey } } });
const local = new StdioServerTransport();

/** A request the gateway could not answer gets a JSON-RPC error, so the assistant is not left waiting. */
const answerFailure = (message, err) => {
  const text = err instanceof Error ? err.message : String(err);
  process.stderr.write(`kb-mcp: ${endpoint.origin}: ${text}\n`);
  if (message && typeof message === 'object' && 'id' in message && 'method' in message) {
    void local.send({
      jsonrpc: '2.0',
      id: message.id,
      error: { code: -32603, message: `The gateway at ${endpoint.origin} refused or failed: ${text}` },
    });
  }
};

// In order: a message waits until the one before it is sent (the session id of
// initialize's answer is on every later request); answers stream back as they come.
let sending = Promise.resolve();
local.onmessage = (message) => {
  sending = sending.then(() => upstream.send(message).catch((err) => answerFailure(message, err)));
};
upstream.onmessage = (message) => {
  // The negotiated version goes on every later HTTP request (MCP-Protocol-Version).
  const version = message?.result?.protocolVersion;
  if (typeof version === 'string' && message.result.serverInfo) upstream.setProtocolVersion(version);
  void local.send(message);
};
upstream.onerror = (err) => process.stderr.write(`kb-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
// The assistant closing stdin (or the transport) ends the session on the gateway, then the process.
const shutdown = () => {
  void sending
    .then(() => upstream.terminateSession())
    .catch(() => undefined)
    .finally(() => process.exit(0));
};
local.onclose = shutdown;
process.stdin.once('end', shutdown);

await upstream.start();
await local.start();
process.stderr.write(`kb MCP server on stdio, bridged to ${endpoint.href}\n`);
