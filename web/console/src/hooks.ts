import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data?: T | undefined;
  error?: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads on mount and whenever `deps` change; `reload` fetches again keeping the last data. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const call = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => call === latest.current && setState({ data, loading: false }),
      (error: Error) => call === latest.current && setState((s) => ({ ...s, error, loading: false })),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Calls `fn` every `ms` while `active`. */
export function useInterval(fn: () => void, ms: number, active: boolean): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (!active) return;
    const id = setInterval(() => saved.current(), ms);
    return () => clearInterval(id);
  }, [ms, active]);
}

/** The hash route: `#/kb/content/<id>` gives ['kb', 'content', '<id>']. */
export function useRoute(): string[] {
  const read = () =>
    location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter((p) => p.length > 0);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
