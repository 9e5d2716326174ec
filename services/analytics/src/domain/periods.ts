/**
 * The days and periods of a report window, by calendar arithmetic on
 * 'YYYY-MM-DD' strings. A Date per day (parse, then format) cost about 3 ms a
 * report over a year, as much as reading and adding up the rows it names.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
const monthString = (year: number, month: number): string => `${String(year).padStart(4, '0')}-${pad2(month)}`;

function parts(day: string): [number, number, number] {
  const m = DATE.exec(day);
  if (!m) throw new Error(`not a day (YYYY-MM-DD): ${day}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** Every day from `from` to `to` (inclusive UTC days, YYYY-MM-DD), in order; empty when from is after to. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  if (from > to) return out;
  let [y, m, d] = parts(from);
  parts(to);
  for (;;) {
    const month = monthString(y, m);
    for (const last = daysInMonth(y, m); d <= last; d++) {
      const day = `${month}-${pad2(d)}`;
      if (day > to) return out;
      out.push(day);
    }
    d = 1;
    if (++m > 12) {
      m = 1;
      y++;
    }
  }
}

/** Every day of a month (YYYY-MM). */
export function daysOfMonth(month: string): string[] {
  const [y, m] = parts(`${month}-01`);
  return daysBetween(`${month}-01`, `${month}-${pad2(daysInMonth(y, m))}`);
}

/**
 * The window as whole months (YYYY-MM, read from month rows) and the days left
 * over at its ends (YYYY-MM-DD, read from day rows), in order: a year is 12
 * periods instead of 365.
 */
export function periodsOf(from: string, to: string): string[] {
  const out: string[] = [];
  if (from > to) return out;
  let [y, m] = parts(from);
  const [ty, tm] = parts(to);
  while (y < ty || (y === ty && m <= tm)) {
    const month = monthString(y, m);
    const first = `${month}-01`;
    const last = `${month}-${pad2(daysInMonth(y, m))}`;
    if (first >= from && last <= to) out.push(month);
    else out.push(...daysBetween(first < from ? from : first, last > to ? to : last));
    if (++m > 12) {
      m = 1;
      y++;
    }
  }
  return out;
}
