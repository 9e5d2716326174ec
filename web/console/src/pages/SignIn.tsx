import { useState } from 'preact/hooks';
import type { Api } from '../api';

export function SignIn({ api, onSignedIn }: { api: Api; onSignedIn: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      await api.login(String(form.get('email')), String(form.get('password')));
      onSignedIn();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <p class="product">
        <img src="/favicon.ico" alt="" width={24} height={24} /> Knowledge Base and Content Generation Service
      </p>
      <h1>Sign in to the console</h1>
      <form onSubmit={submit} aria-describedby={error ? 'signin-error' : undefined}>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required minLength={12} />
        </label>
        {error && (
          <p id="signin-error" class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
