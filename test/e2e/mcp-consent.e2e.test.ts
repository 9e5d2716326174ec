import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, type SignedIn } from './identity-fixtures.js';
import { mcpClient, ok } from './mcp-fixtures.js';

/**
 * The consent page as a person walks it from an assistant, driven by an HTTP
 * client that reads each page's form and submits it as a browser would: sign in
 * with email and password, pick the organization and folders from the tree,
 * allow; the assistant's token then sees those folders only.
 */
let t: TestSystem;
let admin: SignedIn;
const REDIRECT = 'http://127.0.0.1:33421/callback';
beforeAll(async () => {
  t = await startTestSystem({ MCP_RATE_LIMIT: '100000' });
  admin = await logIn(t, 'admin@example.com', 'development-password');
});
afterAll(async () => t.stop());

interface Form {
  action: string;
  fields: [string, string][];
  checkboxes: { name: string; value: string; label: string }[];
  selects: Record<string, { value: string; label: string; selected: boolean }[]>;
  buttons: { name: string; value: string }[];
}

const unescape = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? unescape(m[1]!) : undefined;
};

/** The page's form as a browser sees it: hidden and text inputs, checkboxes with their labels, selects, submit buttons. */
function formOf(html: string): Form {
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  assert.ok(form, `a form in ${html.slice(0, 500)}`);
  const body = form[2]!;
  const fields: [string, string][] = [];
  const checkboxes: Form['checkboxes'] = [];
  for (const tag of body.match(/<input[^>]*>/g) ?? []) {
    const name = attr(tag, 'name');
    if (!name) continue;
    if (attr(tag, 'type') === 'checkbox') {
      const id = attr(tag, 'id');
      const label = new RegExp(`<label for="${id}">([^<]*)</label>`).exec(body)?.[1] ?? '';
      checkboxes.push({ name, value: attr(tag, 'value')!, label: unescape(label) });
    } else fields.push([name, attr(tag, 'value') ?? '']);
  }
  const selects: Form['selects'] = {};
  for (const m of body.matchAll(/<select[^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
    selects[m[1]!] = [...m[2]!.matchAll(/<option value="([^"]*)"( selected)?>([^<]*)<\/option>/g)].map((o) => ({
      value: unescape(o[1]!),
      label: unescape(o[3]!),
      selected: !!o[2],
    }));
  }
  const buttons = [...body.matchAll(/<button type="submit"(?: name="([^"]+)" value="([^"]+)")?>/g)].map((b) => ({
    name: b[1] ?? '',
    value: b[2] ?? '',
  }));
  return { action: form[1]!, fields, checkboxes, selects, buttons };
}

/** Submits a form: its fields, the values filled in, the checked boxes and the button pressed. */
async function submit(form: Form, fill: Record<string, string>, checked: string[], button?: { name: string; value: string }) {
  const body = new URLSearchParams();
  for (const [k, v] of form.fields) body.append(k, fill[k] ?? v);
  for (const [k, options] of Object.entries(form.selects)) body.append(k, fill[k] ?? options.find((o) => o.selected)?.value ?? '');
  for (const c of form.checkboxes) if (checked.includes(c.value)) body.append(c.name, c.value);
  if (button?.name) body.append(button.name, button.value);
  return fetch(new URL(form.action, t.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
    redirect: 'manual',
  });
}

async function startAuthorization() {
  const reg = await fetch(`${t.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Consent assistant', redirect_uris: [REDIRECT] }),
  });
  const clientId = ((await reg.json()) as { client_id: string }).client_id;
  const verifier = randomBytes(32).toString('base64url');
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'consent-state',
    resource: `${t.url}/mcp`,
  });
  const first = await fetch(`${t.url}/oauth/authorize?${params}`);
  assert.equal(first.status, 200);
  const html = await first.text();
  assert.match(html, /Allow Consent assistant to use your knowledge base\?/);
  assert.doesNotMatch(html, /session token/i, 'nobody is asked to paste a token');
  return { clientId, verifier, signIn: formOf(html) };
}

const folder = async (name: string, parent_id?: string) => {
  const res = await t.api('POST', '/org/kb/folders', { body: { name, ...(parent_id && { parent_id }) } });
  assert.equal(res.status, 201, res.text);
  return res.body.kb_node_id as string;
};

describe('OAuth consent page', () => {
  it('sign in with email and password, pick folders from the tree, allow: the assistant sees those folders', async () => {
    const birds = await folder('Consent birds');
    const waders = await folder('Consent waders', birds);
    await folder('Consent fish');
    const { clientId, verifier, signIn } = await startAuthorization();
    assert.deepEqual(
      signIn.fields.filter(([k]) => ['email', 'password'].includes(k)).map(([k]) => k),
      ['email', 'password'],
    );

    const wrong = await submit(signIn, { email: 'admin@example.com', password: 'not the password' }, [], signIn.buttons[0]);
    assert.equal(wrong.status, 401);
    const again = await wrong.text();
    assert.match(again, /Wrong email or password/);
    assert.equal(formOf(again).fields.find(([k]) => k === 'email')![1], 'admin@example.com', 'the email is kept');

    const signedIn = await submit(formOf(again), { password: 'development-password' }, [], signIn.buttons[0]);
    assert.equal(signedIn.status, 200);
    const consent = formOf(await signedIn.text());
    const orgs = consent.selects.org_id!;
    assert.ok(orgs.some((o) => o.selected));
    const labels = consent.checkboxes.map((c) => c.label);
    for (const name of ['Consent birds', 'Consent waders', 'Consent fish'])
      assert.ok(labels.includes(name), `${name} in ${labels.join(', ')}`);
    const allow = consent.buttons.find((b) => b.value === 'allow')!;

    const res = await submit(consent, {}, [waders], allow);
    assert.equal(res.status, 302, await res.clone().text());
    const location = new URL(res.headers.get('location')!);
    assert.equal(location.searchParams.get('state'), 'consent-state');
    const tokens = (await (
      await fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: location.searchParams.get('code')!,
          code_verifier: verifier,
          client_id: clientId,
          redirect_uri: REDIRECT,
          resource: `${t.url}/mcp`,
        }),
      })
    ).json()) as { access_token: string };
    const client = await mcpClient(t.url, { authorization: `Bearer ${tokens.access_token}` });
    assert.deepEqual(
      (await ok(client, 'kb_tree')).children.map((c: { kb_node_id: string }) => c.kb_node_id),
      [waders],
      'the folder ticked on the page is the grant’s scope',
    );
    await client.close();
  });

  it('with two organizations the page shows the chosen one’s folders; deny goes back with access_denied', async () => {
    const other = await admin.call('POST', '/orgs', { name: 'Consent second org' });
    assert.equal(other.status, 201, other.text);
    const otherId = other.body.org_id as string;
    const { signIn } = await startAuthorization();
    const consent = formOf(
      await (await submit(signIn, { email: 'admin@example.com', password: 'development-password' }, [], signIn.buttons[0])).text(),
    );
    assert.ok(consent.selects.org_id!.some((o) => o.value === otherId && o.label === 'Consent second org'));
    const show = consent.buttons.find((b) => b.name === 'step' && b.value === 'org')!;
    const switched = await submit(consent, { org_id: otherId }, [], show);
    assert.equal(switched.status, 200);
    const second = formOf(await switched.text());
    assert.equal(second.selects.org_id!.find((o) => o.selected)!.value, otherId);
    assert.ok(!second.checkboxes.some((c) => c.label.startsWith('Consent birds')), 'the other organization’s folders');

    const denied = await submit(
      second,
      {},
      [],
      second.buttons.find((b) => b.value === 'deny'),
    );
    assert.equal(denied.status, 302);
    assert.equal(new URL(denied.headers.get('location')!).searchParams.get('error'), 'access_denied');
  });
});
