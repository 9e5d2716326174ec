/**
 * Regenerates the configuration table of docs/configuration.md from the services' configuration
 * schemas (`npm run docs:config`). `--check` only says whether the page is current (exit 1 if not).
 */
import { readFileSync } from 'node:fs';
import { CONFIG_PAGE, updateConfigPage, withCurrentTable } from '../test/docs/config-docs.js';

if (process.argv.includes('--check')) {
  const page = readFileSync(CONFIG_PAGE, 'utf8');
  if ((await withCurrentTable(page)) !== page) {
    process.stderr.write(`${CONFIG_PAGE} is stale: run npm run docs:config\n`);
    process.exit(1);
  }
  process.stdout.write(`${CONFIG_PAGE} is current\n`);
} else {
  const changed = await updateConfigPage();
  process.stdout.write(`${CONFIG_PAGE} ${changed ? 'updated' : 'already current'}\n`);
}
