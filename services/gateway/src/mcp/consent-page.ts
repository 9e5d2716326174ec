/**
 * The HTML of the OAuth consent flow a person walks from an assistant: sign in
 * with email and password, then choose the organization and the folders the
 * assistant may see, then allow or deny. Server-rendered forms, no script; every
 * value from outside is escaped.
 */

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const hiddenFields = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');

const problem = (error?: string) => (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '');

const what = (client: string, redirectUri: string, resource: string) =>
  `<p><strong>${escapeHtml(client)}</strong> asks to act for you through the MCP server at <code>${escapeHtml(resource)}</code> ` +
  `with your role's permissions ` +
  `(searching, reading and adding knowledge-base content, tracked prompts, analytics, generation and publishing). ` +
  `It will be sent back to <code>${escapeHtml(redirectUri)}</code>.</p>`;

/** Step 1: sign in. `authorize` holds the authorization request, carried along as hidden fields. */
export function signInForm(o: {
  client: string;
  redirectUri: string;
  /** The MCP server (RFC 8707 resource) the assistant's tokens will be for. */
  resource: string;
  authorize: Record<string, string>;
  email?: string;
  error?: string;
}) {
  return (
    what(o.client, o.redirectUri, o.resource) +
    problem(o.error) +
    `<form method="post" action="/oauth/authorize">${hiddenFields({ ...o.authorize, step: 'signin' })}` +
    '<label for="email">Email</label>' +
    `<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(o.email ?? '')}">` +
    '<label for="password">Password</label>' +
    '<input id="password" name="password" type="password" autocomplete="current-password" required>' +
    '<button type="submit">Sign in</button>' +
    '</form>'
  );
}

export interface FolderChoice {
  kb_node_id: string;
  name: string;
  depth: number;
}

/** Step 2: the organization, the folders (none: the whole knowledge base), then allow or deny. */
export function consentForm(o: {
  client: string;
  redirectUri: string;
  resource: string;
  authorize: Record<string, string>;
  /** The page's own short session (ended by Allow or Deny). */
  sessionToken: string;
  email: string;
  organizations: { org_id: string; name: string }[];
  orgId: string;
  folders: FolderChoice[];
  foldersCut: boolean;
  error?: string;
}) {
  const options = o.organizations
    .map((org) => `<option value="${escapeHtml(org.org_id)}"${org.org_id === o.orgId ? ' selected' : ''}>${escapeHtml(org.name)}</option>`)
    .join('');
  const folders =
    o.folders.length === 0
      ? '<p>This organization has no folders yet: the assistant would see the whole knowledge base.</p>'
      : '<fieldset><legend>Folders the assistant may see (none checked: the whole knowledge base)</legend>' +
        o.folders
          .map(
            (f, i) =>
              `<div style="margin-left:${f.depth * 1.5}rem"><input type="checkbox" id="folder-${i}" name="folder_ids" value="${escapeHtml(f.kb_node_id)}">` +
              `<label for="folder-${i}">${escapeHtml(f.name)}</label></div>`,
          )
          .join('') +
        (o.foldersCut ? '<p>Only the first folders are listed.</p>' : '') +
        '</fieldset>';
  return (
    what(o.client, o.redirectUri, o.resource) +
    `<p>Signed in as <strong>${escapeHtml(o.email)}</strong>.</p>` +
    problem(o.error) +
    `<form method="post" action="/oauth/authorize">${hiddenFields({ ...o.authorize, consent_session: o.sessionToken, shown_org_id: o.orgId })}` +
    `<label for="org_id">Organization</label><select id="org_id" name="org_id">${options}</select>` +
    (o.organizations.length > 1 ? '<button type="submit" name="step" value="org">Show this organization’s folders</button>' : '') +
    folders +
    '<button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button>' +
    '</form>'
  );
}
