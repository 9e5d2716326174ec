import { spawn, spawnSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { REPO_ROOT } from '../docs/markdown.js';

/** What the documentation's runnable examples need: they run in bash, with curl and jq. */
export function missingTools(): string | undefined {
  const missing = ['bash', 'curl', 'jq'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
  return missing.length > 0 ? `the examples need ${missing.join(', ')} on PATH` : undefined;
}

/**
 * Shell prelude: stop at the first failing command, and make curl fail on an HTTP error
 * status (keeping the body for the log) unless the example asks for -f itself. The statuses
 * in KB_DOCS_ACCEPT pass: on the second run the answers that mean "already there" (409 a
 * name taken, 422 a duplicate upload, both naming the existing item) are the documented result.
 */
export const preludeAccepting = (statuses: number[]) => `set -euo pipefail
KB_DOCS_ACCEPT=' ${statuses.join(' ')} '
curl() {
  local arg err rc status
  for arg in "$@"; do
    case "$arg" in --fail|--fail-with-body|-[!-]*f*) command curl "$@"; return;; esac
  done
  err=$(mktemp)
  rc=0
  command curl -w '%{stderr}kb-docs-status:%{http_code}\n' "$@" 2>"$err" || rc=$?
  status=$(sed -n 's/^kb-docs-status://p' "$err" | tail -n 1)
  grep -v '^kb-docs-status:' "$err" >&2 || true
  rm -f "$err"
  [ "$rc" -eq 0 ] || return "$rc"
  if [ "\${status:-0}" -ge 400 ] && [[ "$KB_DOCS_ACCEPT" != *" $status "* ]]; then
    echo "curl: the server answered HTTP $status" >&2
    return 22
  fi
}
`;
/** The first run: every HTTP error fails. */
export const FIRST_RUN = preludeAccepting([]);
/** Again on the same data: a name taken (409) or a duplicate upload (422) is what a re-run gets. */
export const SECOND_RUN = preludeAccepting([409, 422]);

/** A port free a moment ago: the server gets a known PORT, as `npm start` has, so hosted links point at it. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Runs a script in bash in its own process group; kills the group when it takes too long. */
export function runShell(script: string, timeoutMs: number): Promise<{ code: number | null; output: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, 'SIGKILL');
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, timedOut });
    });
  });
}
