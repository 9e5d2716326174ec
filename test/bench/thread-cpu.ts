import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU seconds so far of each thread of this process, by thread id (the main
 * thread's is the process id), with its nice value; from /proc, so Linux only
 * (undefined elsewhere). Ticks of 1/100 s (USER_HZ).
 */
export function threadCpu(): Map<number, { nice: number; seconds: number }> | undefined {
  try {
    const out = new Map<number, { nice: number; seconds: number }>();
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), { nice: Number(fields[16]), seconds: (Number(fields[11]) + Number(fields[12])) / 100 });
    }
    return out;
  } catch {
    return undefined;
  }
}
