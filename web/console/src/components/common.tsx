import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { ProcessingStatus, Ratio } from '../types';

/**
 * A ratio as the API displays it, with its numerator and denominator on hover
 * and on keyboard focus (every ratio's counts are in the response's totals).
 */
export function RatioView({ ratio, num, den, label }: { ratio: Ratio; num: number; den: number; label: string }) {
  const id = useId();
  const detail = `${num.toLocaleString()} / ${den.toLocaleString()} ${label}`;
  return (
    <span class="ratio" tabIndex={0} aria-describedby={id}>
      {ratio.value === null ? 'n/a' : ratio.display}
      <span role="tooltip" id={id} class="tip">
        {detail}
      </span>
    </span>
  );
}

const statusText: Record<ProcessingStatus, string> = {
  queued: 'Queued',
  processing: 'Processing',
  completed: 'Completed',
  failed: 'Failed',
};

export function StatusBadge({ status }: { status: ProcessingStatus }) {
  return <span class={`badge badge-${status}`}>{statusText[status]}</span>;
}

export function ErrorNote({ error }: { error: Error | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.message}
    </p>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card" aria-label={title}>
      <header class="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

export const formatDate = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');
