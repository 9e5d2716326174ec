/** The start of the cadence slot a moment falls in (UTC; weeks start on Monday). */
export function slotStart(now: Date, cadence: 'hourly' | 'daily' | 'weekly'): string {
  const d = new Date(now.getTime());
  d.setUTCMinutes(0, 0, 0);
  if (cadence === 'hourly') return d.toISOString();
  d.setUTCHours(0);
  if (cadence === 'daily') return d.toISOString();
  const sinceMonday = (d.getUTCDay() + 6) % 7;
  d.setUTCDate(d.getUTCDate() - sinceMonday);
  return d.toISOString();
}
