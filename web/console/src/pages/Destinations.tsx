import { useState } from 'preact/hooks';
import type { Api } from '../api';
import { useLoad } from '../hooks';
import { ErrorNote, Section, formatDate } from '../components/common';
import { choicesOf, type JsonSchema } from '../components/SchemaForm';

interface Destination {
  destination_id: string;
  type: 'hosted' | 'webhook' | 'wordpress' | 'ghost';
  name: string;
  scope: 'shared' | 'organization';
  config: Record<string, unknown>;
  has_secret: boolean;
  enabled: boolean;
  is_default: boolean;
}
interface Subscription {
  subscription_id: string;
  url: string;
  event_kinds: string[];
}
interface Delivery {
  delivery_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed' | 'cancelled';
  attempts: number;
  created_at: string;
}

const deliveryStatusText: Record<Delivery['status'], string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  failed: 'Failed',
  cancelled: 'Cancelled (its subscription or destination was removed)',
};

/** Destinations: switch shared ones on or off, add a webhook, remove one with a choice for its live content. Secrets are never shown. */
export function Destinations({ api }: { api: Api }) {
  const list = useLoad(() => api.request<Destination[]>('GET', '/org/destinations'), []);
  const [error, setError] = useState<Error>();
  const run = async (fn: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await fn();
      list.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const add = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    void run(async () => {
      await api.request('POST', '/org/destinations', {
        type: 'webhook',
        name: String(data.get('name')).trim(),
        config: { url: String(data.get('url')).trim() },
        secret: String(data.get('secret')),
      });
      form.reset();
    });
  };
  return (
    <Section title="Destinations">
      <ErrorNote error={list.error ?? error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Scope</th>
            <th scope="col">Secret</th>
            <th scope="col">Enabled</th>
            <th scope="col">Remove (live content)</th>
          </tr>
        </thead>
        <tbody>
          {(list.data ?? []).map((d) => (
            <tr key={d.destination_id}>
              <td>
                {d.name}
                {d.is_default && ' (default set)'}
              </td>
              <td>{d.type}</td>
              <td>{d.scope}</td>
              <td>{d.has_secret ? 'stored, never shown' : '—'}</td>
              <td>
                <label class="check">
                  <input
                    type="checkbox"
                    checked={d.enabled}
                    onChange={(e) =>
                      void run(() =>
                        api.request('PATCH', `/org/destinations/${d.destination_id}`, {
                          enabled: (e.currentTarget as HTMLInputElement).checked,
                        }),
                      )
                    }
                  />{' '}
                  <span class="visually-hidden">{d.name} </span>enabled
                </label>
              </td>
              <td>
                {d.scope === 'organization' &&
                  (['leave', 'unpublish', 'delete'] as const).map((mode) => (
                    <button
                      key={mode}
                      type="button"
                      aria-label={`Remove ${d.name} and ${mode} its live content`}
                      onClick={() => void run(() => api.request('DELETE', `/org/destinations/${d.destination_id}?on_live_content=${mode}`))}
                    >
                      {mode}
                    </button>
                  ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form class="inline" onSubmit={add}>
        <label>
          Webhook name
          <input name="name" required maxLength={200} />
        </label>
        <label class="grow">
          Webhook URL
          <input name="url" type="url" required />
        </label>
        <label>
          Signing secret
          <input name="secret" type="password" required minLength={8} autoComplete="off" />
        </label>
        <button type="submit">Add webhook destination</button>
      </form>
    </Section>
  );
}

/** Lifecycle webhooks: subscriptions, a sample event, the delivery log and redelivery. */
export function Webhooks({ api }: { api: Api }) {
  const subs = useLoad(() => api.request<Subscription[]>('GET', '/org/webhooks'), []);
  // The event kinds are the API's own closed list, read from the schema it publishes.
  const doc = useLoad(
    () =>
      api.request<{ paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>> }>(
        'GET',
        '/openapi.json',
      ),
    [],
  );
  const kinds =
    choicesOf(
      doc.data?.paths['/api/v1/org/webhooks']?.post?.requestBody?.content['application/json']?.schema.properties?.event_kinds?.items ?? {},
    ) ?? [];
  const [open, setOpen] = useState<string>();
  const log = useLoad(
    () => (open ? api.request<Delivery[]>('GET', `/org/webhooks/${open}/deliveries`) : Promise.resolve([] as Delivery[])),
    [open],
  );
  const [error, setError] = useState<Error>();
  const run = async (fn: () => Promise<unknown>, after: () => void) => {
    setError(undefined);
    try {
      await fn();
      after();
    } catch (err) {
      setError(err as Error);
    }
  };
  const create = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    void run(
      () =>
        api.request('POST', '/org/webhooks', {
          url: String(data.get('url')).trim(),
          event_kinds: data.getAll('event_kinds').map(String),
          secret: String(data.get('secret')),
        }),
      () => {
        form.reset();
        subs.reload();
      },
    );
  };
  return (
    <Section title="Lifecycle webhooks">
      <ErrorNote error={subs.error ?? error} />
      <ul class="plain">
        {(subs.data ?? []).map((s) => (
          <li key={s.subscription_id}>
            <code>{s.url}</code> — {s.event_kinds.join(', ')}{' '}
            <button
              type="button"
              onClick={() => void run(() => api.request('POST', `/org/webhooks/${s.subscription_id}/test`, {}), log.reload)}
            >
              Send a sample
            </button>{' '}
            <button type="button" onClick={() => setOpen(s.subscription_id)}>
              Deliveries
            </button>{' '}
            <button
              type="button"
              onClick={() => void run(() => api.request('DELETE', `/org/webhooks/${s.subscription_id}`), subs.reload)}
              aria-label={`Delete the subscription to ${s.url}`}
            >
              Delete
            </button>
          </li>
        ))}
      </ul>
      {open && (
        <table>
          <caption>Deliveries</caption>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Redeliver</th>
            </tr>
          </thead>
          <tbody>
            {(log.data ?? []).map((d) => (
              <tr key={d.delivery_id}>
                <td>{formatDate(d.created_at)}</td>
                <td>{d.event_type}</td>
                <td>{deliveryStatusText[d.status]}</td>
                <td>{d.attempts}</td>
                <td>
                  <button
                    type="button"
                    disabled={d.status === 'pending' || d.status === 'cancelled'}
                    onClick={() =>
                      void run(() => api.request('POST', `/org/webhook-deliveries/${d.delivery_id}/redeliver`, {}), log.reload)
                    }
                  >
                    Redeliver
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={create}>
        <div class="field">
          <label for="wh-url">Subscription URL</label>
          <input id="wh-url" name="url" type="url" required />
        </div>
        <fieldset>
          <legend>Events</legend>
          {kinds.map((k) => (
            <label key={k} class="check">
              <input type="checkbox" name="event_kinds" value={k} /> {k}
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for="wh-secret">Signing secret</label>
          <input id="wh-secret" name="secret" type="password" required minLength={16} autoComplete="off" />
        </div>
        <button type="submit">Subscribe</button>
      </form>
    </Section>
  );
}
