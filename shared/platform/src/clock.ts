/** Injected so that tests control time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function fixedClock(start: Date | string, stepMs = 0): Clock & { advance(ms: number): void } {
  let t = new Date(start).getTime();
  return {
    now() {
      const d = new Date(t);
      t += stepMs;
      return d;
    },
    advance(ms: number) {
      t += ms;
    },
  };
}

export const isoNow = (clock: Clock): string => clock.now().toISOString();
