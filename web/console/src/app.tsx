import { useEffect, useMemo, useState } from 'preact/hooks';
import { createApi, type Api } from './api';
import { useLoad, useRoute } from './hooks';
import { SignIn } from './pages/SignIn';
import { KnowledgeBase } from './pages/KnowledgeBase';
import { Search } from './pages/Search';
import { Categories } from './pages/Categories';
import { Analytics } from './pages/Analytics';
import { Organization } from './pages/Organization';
import { Generation } from './pages/Generation';
import { Review } from './pages/Review';
import type { Me } from './types';

const sections = [
  { path: 'kb', label: 'Knowledge base' },
  { path: 'search', label: 'Search' },
  { path: 'categories', label: 'Categories' },
  { path: 'generation', label: 'Generation' },
  { path: 'review', label: 'Review' },
  { path: 'analytics', label: 'Analytics' },
  { path: 'org', label: 'Organization' },
] as const;

export function App({ api: given }: { api?: Api }) {
  const [signedIn, setSignedIn] = useState(false);
  const api = useMemo(() => given ?? createApi('/api/v1', sessionStorage, () => setSignedIn(false)), [given]);
  useEffect(() => setSignedIn(api.signedIn), [api]);
  if (!signedIn) return <SignIn api={api} onSignedIn={() => setSignedIn(true)} />;
  return <Shell api={api} onSignOut={() => void api.logout().finally(() => setSignedIn(false))} />;
}

function Shell({ api, onSignOut }: { api: Api; onSignOut: () => void }) {
  const route = useRoute();
  const me = useLoad(() => api.request<Me>('GET', '/auth/me'), []);
  const current = route[0] ?? 'kb';
  useEffect(() => {
    const label = sections.find((s) => s.path === current)?.label ?? 'Console';
    document.title = `${label} · Knowledge base console`;
  }, [current]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <strong class="brand">{me.data?.organization?.name ?? 'Knowledge base'}</strong>
        <nav aria-label="Sections">
          <ul>
            {sections.map((s) => (
              <li key={s.path}>
                <a href={`#/${s.path}`} aria-current={current === s.path ? 'page' : undefined}>
                  {s.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">{me.data?.user.email}</span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <h1 class="visually-hidden">{sections.find((s) => s.path === current)?.label}</h1>
        {me.data && !me.data.organization ? (
          <p>Your account belongs to no organization yet.</p>
        ) : current === 'search' ? (
          <Search api={api} />
        ) : current === 'categories' ? (
          <Categories api={api} />
        ) : current === 'generation' ? (
          <Generation api={api} draftId={route[1] === 'draft' ? route[2] : undefined} />
        ) : current === 'review' ? (
          <Review api={api} pieceId={route[1]} />
        ) : current === 'analytics' ? (
          <Analytics api={api} />
        ) : current === 'org' ? (
          <Organization api={api} permissions={me.data?.permissions ?? []} />
        ) : (
          <KnowledgeBase api={api} contentId={route[1] === 'content' ? route[2] : undefined} />
        )}
      </main>
    </>
  );
}
