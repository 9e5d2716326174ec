import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  color: string;
  /** One value per day, 0..1, or null where the day has no denominator. */
  values: (number | null)[];
}

/** A time series of ratios by UTC day (uPlot), with a table fallback for screen readers. */
export function LineChart({ days, series, title }: { days: string[]; series: Series[]; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || days.length === 0) return;
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const width = Math.max(280, el.clientWidth || 600);
    // One day has no line to draw: it is a point, centred in a day either side of it.
    const single = xs.length === 1;
    const plot = new uPlot(
      {
        title,
        width,
        height: 240,
        scales: { y: { range: [0, 1] }, ...(single && { x: { time: true, range: [xs[0]! - 86_400, xs[0]! + 86_400] } }) },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => `${Math.round(t * 100)}%`) }],
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            spanGaps: false,
            points: { show: single || undefined, size: single ? 10 : 5 },
            value: (_u: uPlot, v: number | null) => (v === null ? 'n/a' : `${(v * 100).toFixed(1)}%`),
          })),
        ],
      },
      [xs, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    return () => plot.destroy();
  }, [days, series, title]);
  return (
    <figure class="chart">
      <div ref={box} aria-hidden="true" />
      <figcaption class="visually-hidden">
        <table>
          <caption>{title}</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {series.map((s) => (
                <th scope="col" key={s.label}>
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {days.map((d, i) => (
              <tr key={d}>
                <th scope="row">{d}</th>
                {series.map((s) => (
                  <td key={s.label}>{s.values[i] === null ? 'n/a' : `${((s.values[i] as number) * 100).toFixed(1)}%`}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </figcaption>
    </figure>
  );
}
