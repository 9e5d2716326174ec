import type { Api } from '../api';
import { useLoad } from '../hooks';
import { ErrorNote, Section } from '../components/common';

interface Topic {
  topic_id: string;
  name: string;
  description?: string;
}
interface Category {
  category_id: string;
  name: string;
  description?: string;
  topics: Topic[];
}

/** Categories and their topics (the category/topic API). */
export function Categories({ api }: { api: Api }) {
  const all = useLoad(() => api.request<Category[]>('GET', '/categories/all'), []);
  const create = async (e: Event, path: string) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const description = String(data.get('description') ?? '').trim();
    await api.request('POST', path, { name: String(data.get('name')).trim(), ...(description && { description }) });
    form.reset();
    all.reload();
  };
  return (
    <div class="stack">
      <Section title="Categories and topics">
        <ErrorNote error={all.error} />
        <form class="inline" onSubmit={(e) => void create(e, '/categories').catch((err: Error) => alert(err.message))}>
          <label>
            Category name
            <input name="name" required minLength={2} maxLength={255} />
          </label>
          <label class="grow">
            Description
            <input name="description" maxLength={1000} />
          </label>
          <button type="submit">Add category</button>
        </form>
        {(all.data ?? []).map((c) => (
          <article key={c.category_id} class="category">
            <h3>{c.name}</h3>
            {c.description && <p>{c.description}</p>}
            <ul>
              {c.topics.map((t) => (
                <li key={t.topic_id}>
                  {t.name}
                  {t.description ? ` — ${t.description}` : ''}
                </li>
              ))}
            </ul>
            <form
              class="inline"
              onSubmit={(e) => void create(e, `/categories/${c.category_id}/topics`).catch((err: Error) => alert(err.message))}
            >
              <label>
                New topic in {c.name}
                <input name="name" required minLength={2} maxLength={255} />
              </label>
              <button type="submit">Add topic</button>
            </form>
          </article>
        ))}
      </Section>
    </div>
  );
}
