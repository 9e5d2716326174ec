import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import assert from 'node:assert/strict';

/** An MCP client (the SDK's own) on /mcp over real HTTP with the given credential headers (and query, e.g. ?toolsets=kb). */
export async function mcpClient(baseUrl: string, headers: Record<string, string>, query = ''): Promise<Client> {
  const client = new Client({ name: 'e2e-assistant', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp${query}`), { requestInit: { headers } }));
  return client;
}

export type ToolOutcome = CallToolResult & { structuredContent?: Record<string, any> };

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
  return (await client.callTool({ name, arguments: args })) as ToolOutcome;
}

/** The structured result of a tool that must succeed. */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await callTool(client, name, args);
  if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.structuredContent ?? res.content)}`);
  (succeeded.get(name) ?? succeeded.set(name, []).get(name)!).push(res.structuredContent!);
  return res.structuredContent!;
}

/** A raw JSON-RPC POST to /mcp (for status codes and headers the SDK client hides). */
export async function rawMcp(baseUrl: string, headers: Record<string, string>, body: unknown = initialize()): Promise<Response> {
  return fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

export const initialize = (protocolVersion = '2025-06-18') => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** Every successful structured result `ok` saw in this test file, by tool. */
const succeeded = new Map<string, Record<string, unknown>[]>();

/**
 * Every tool declares an output schema (the top-level fields of its result,
 * with no error branch); every successful result seen so far validates against
 * it, and every tool in `expected` was seen.
 * (The SDK client also checks each result against the schema on every call.)
 */
export async function assertOutputSchemas(client: Client, expected: readonly string[]): Promise<void> {
  const { tools } = await client.listTools();
  const validator = new AjvJsonSchemaValidator();
  for (const tool of tools) {
    const schema = tool.outputSchema as { type: string; properties?: Record<string, unknown>; anyOf?: unknown } | undefined;
    assert.equal(schema?.type, 'object', `${tool.name} declares an output schema`);
    assert.equal(schema.anyOf, undefined, `${tool.name}: no error branch`);
    const check = validator.getValidator<Record<string, unknown>>(schema as never);
    for (const result of succeeded.get(tool.name) ?? []) {
      const verdict = check(result);
      assert.ok(verdict.valid, `${tool.name}: ${verdict.errorMessage} in ${JSON.stringify(result).slice(0, 500)}`);
    }
  }
  for (const name of expected) assert.ok(succeeded.has(name), `${name} was called`);
}
