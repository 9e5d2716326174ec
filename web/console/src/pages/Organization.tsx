import { useState } from 'preact/hooks';
import type { Api } from '../api';
import { Destinations, Webhooks } from './Destinations';
import { useLoad } from '../hooks';
import { FolderTree } from '../components/Tree';
import { ErrorNote, formatDate, Section } from '../components/common';
import type { ApiKey, Member } from '../types';

interface Role {
  role_id: string;
  name: string;
  permissions: string[];
}
interface Balance {
  balance: number;
  reserved: number;
  monthly_spend_limit: number | null;
  spent_this_month: number;
  month: string;
}
interface LedgerEntry {
  entry_id: string;
  operation: string;
  amount: number;
  balance_after: number;
  at: string;
}

/** Members and roles, API keys (the secret shown once), credits and their use. */
export function Organization({ api, permissions }: { api: Api; permissions: string[] }) {
  const can = (p: string) => permissions.includes(p);
  return (
    <div class="stack">
      <Members api={api} canManage={can('manage:users')} />
      {can('manage:api_keys') && <ApiKeys api={api} />}
      <Credits api={api} />
      {can('manage:destinations') && <Destinations api={api} />}
      {can('manage:destinations') && <Webhooks api={api} />}
    </div>
  );
}

function Members({ api, canManage }: { api: Api; canManage: boolean }) {
  const members = useLoad(() => api.request<Member[]>('GET', '/org/members?limit=100'), []);
  const roles = useLoad(() => api.request<Role[]>('GET', '/org/roles'), []);
  const [error, setError] = useState<Error>();
  const invite = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    try {
      await api.request('POST', '/org/users', { email: String(data.get('email')), role_id: String(data.get('role_id')) });
      form.reset();
      setError(undefined);
      members.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const changeRole = async (userId: string, roleId: string) => {
    try {
      await api.request('PUT', `/org/users/${userId}`, { role_id: roleId });
      setError(undefined);
    } catch (err) {
      setError(err as Error);
    }
    members.reload();
  };
  return (
    <Section title="Members">
      <ErrorNote error={members.error ?? error} />
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
          </tr>
        </thead>
        <tbody>
          {(members.data ?? []).map((m) => (
            <tr key={m.user_id}>
              <td>{m.name}</td>
              <td>{m.email}</td>
              <td>
                {canManage && roles.data ? (
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role_id}
                    onChange={(e) => void changeRole(m.user_id, (e.target as HTMLSelectElement).value)}
                  >
                    {roles.data.map((r) => (
                      <option key={r.role_id} value={r.role_id}>
                        {r.name}
                      </option>
                    ))}
                  </select>
                ) : (
                  m.role_name
                )}
              </td>
              <td>{formatDate(m.joined_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {canManage && roles.data && (
        <form class="inline" onSubmit={invite}>
          <label>
            Add a user by email
            <input name="email" type="email" required />
          </label>
          <label>
            Role
            <select name="role_id">
              {roles.data.map((r) => (
                <option key={r.role_id} value={r.role_id}>
                  {r.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Add</button>
        </form>
      )}
    </Section>
  );
}

function ApiKeys({ api }: { api: Api }) {
  const keys = useLoad(() => api.request<ApiKey[]>('GET', '/org/api-keys?limit=100'), []);
  const [scoped, setScoped] = useState(false);
  const [folders, setFolders] = useState(new Set<string>());
  const [created, setCreated] = useState<{ name: string; key: string }>();
  const [error, setError] = useState<Error>();
  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get('name')).trim();
    try {
      const res = await api.request<{ key: string; name: string }>('POST', '/org/api-keys', {
        name,
        ...(scoped && { folder_scope: [...folders] }),
      });
      setCreated({ name: res.name, key: res.key });
      setError(undefined);
      form.reset();
      setFolders(new Set());
      setScoped(false);
      keys.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const revoke = async (id: string) => {
    await api.request('DELETE', `/org/api-keys/${id}`);
    keys.reload();
  };
  return (
    <Section title="API keys">
      <ErrorNote error={keys.error ?? error} />
      {created && (
        <div class="reveal" role="status">
          <p>
            The key <strong>{created.name}</strong> is shown this once. Copy it now:
          </p>
          <code data-testid="new-key">{created.key}</code>
          <button type="button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      )}
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Folders</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(keys.data ?? []).map((k) => (
            <tr key={k.key_id}>
              <td>{k.name}</td>
              <td>
                <code>{k.hint}</code>
              </td>
              <td>{k.folder_scope === null ? 'All' : k.folder_scope.length === 0 ? 'None' : `${k.folder_scope.length} folder(s)`}</td>
              <td>{formatDate(k.last_used_at)}</td>
              <td>
                <button type="button" class="danger" onClick={() => void revoke(k.key_id)} aria-label={`Revoke ${k.name}`}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form onSubmit={create} class="stack">
        <label>
          New key name
          <input name="name" required minLength={2} maxLength={100} />
        </label>
        <label>
          <input type="checkbox" checked={scoped} onChange={(e) => setScoped((e.target as HTMLInputElement).checked)} /> Limit to folders
        </label>
        {scoped && (
          <fieldset>
            <legend>Folders this key may see</legend>
            <FolderTree
              api={api}
              checked={folders}
              onCheck={(id, on) => {
                const next = new Set(folders);
                if (on) next.add(id);
                else next.delete(id);
                setFolders(next);
              }}
            />
          </fieldset>
        )}
        <div>
          <button type="submit">Create key</button>
        </div>
      </form>
    </Section>
  );
}

function Credits({ api }: { api: Api }) {
  const balance = useLoad(() => api.request<Balance>('GET', '/org/credits/balance'), []);
  const usage = useLoad(() => api.request<LedgerEntry[]>('GET', '/org/credits/usage?limit=20'), []);
  return (
    <Section title="Credits">
      <ErrorNote error={balance.error ?? usage.error} />
      {balance.data && (
        <dl class="metrics">
          <div>
            <dt>Balance</dt>
            <dd>{balance.data.balance.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Reserved</dt>
            <dd>{balance.data.reserved.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Spent in {balance.data.month}</dt>
            <dd>{balance.data.spent_this_month.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Monthly limit</dt>
            <dd>{balance.data.monthly_spend_limit?.toLocaleString() ?? 'none'}</dd>
          </div>
        </dl>
      )}
      <table class="list">
        <caption>Recent usage</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Operation</th>
            <th scope="col">Credits</th>
            <th scope="col">Balance after</th>
          </tr>
        </thead>
        <tbody>
          {(usage.data ?? []).map((u) => (
            <tr key={u.entry_id}>
              <td>{formatDate(u.at)}</td>
              <td>{u.operation}</td>
              <td>{u.amount}</td>
              <td>{u.balance_after.toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
