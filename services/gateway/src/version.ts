import { readFileSync } from 'node:fs';

/**
 * The service's version, as its package.json says (every workspace package and the
 * repository carry the same one): the OpenAPI document and the MCP server report it.
 * Read from ../package.json, which is the gateway's from both src/ and dist/.
 */
export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
