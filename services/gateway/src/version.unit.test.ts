import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_VERSION } from './version.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const versionOf = (manifest: string) => (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;

describe('one version number everywhere', () => {
  it("is the repository's package.json version, carried by every workspace package", () => {
    assert.equal(SERVICE_VERSION, versionOf(join(root, 'package.json')));
    for (const group of ['shared', 'services', 'web']) {
      for (const dir of readdirSync(join(root, group))) {
        const manifest = join(root, group, dir, 'package.json');
        if (existsSync(manifest)) assert.equal(versionOf(manifest), SERVICE_VERSION, manifest);
      }
    }
  });
});
